module github.com/hookline/hookline/outbox

go 1.21

require (
	github.com/aws/aws-sdk-go-v2 v1.36.1
	github.com/aws/aws-sdk-go-v2/service/dynamodb v1.40.1
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/aws/smithy-go v1.22.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
