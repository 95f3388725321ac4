package hookline

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// localstackServices names, for the service part of each CloudFormation
// resource type the stack synthesizes ("AWS::<service>::..."), the
// LocalStack services (SERVICES names, the AWS CLI's) that create the
// resource and serve what it does. A type whose service is not here fails
// TestLocalStackComposeListsEveryService: say which services it needs.
var localstackServices = map[string][]string{
	"ApiGatewayV2":   {"apigateway", "apigatewayv2"},
	"CloudWatch":     {"cloudwatch"},
	"DynamoDB":       {"dynamodb"},
	"Events":         {"events"},
	"IAM":            {"iam"},
	"KMS":            {"kms"},
	"Lambda":         {"lambda", "logs"},
	"Logs":           {"logs"},
	"SNS":            {"sns"},
	"SQS":            {"sqs"},
	"SecretsManager": {"secretsmanager"},
	"S3":             {"s3"},
	"SSM":            {"ssm"},
}

// deployServices are what `cdk bootstrap` and `cdk deploy` call whatever the
// stack holds: CloudFormation; the bootstrap stack's asset bucket, image
// repository, roles and version parameter; the caller's identity.
var deployServices = []string{"cloudformation", "s3", "ecr", "iam", "ssm", "sts"}

// composeServices reads the SERVICES list of localstack/docker-compose.yml
// (a line "- SERVICES=a,b,c"; the file is small and fixed, so a line match
// does without a YAML parser).
func composeServices(t *testing.T, compose string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*-\s*SERVICES=(.*)$`).FindAllStringSubmatch(compose, -1)
	require.Len(t, m, 1, "one SERVICES line in the compose file")
	var out []string
	for _, s := range strings.Split(m[0][1], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// The LocalStack compose file starts every service the stack needs: those
// of each resource type in the synthesized template, DynamoDB Streams for a
// table with a stream, and what deploying needs. Its Lambda containers can
// reach receivers on the host (the e2e tests' receivers listen on
// 127.0.0.1).
func TestLocalStackComposeListsEveryService(t *testing.T) {
	b, err := os.ReadFile("../../localstack/docker-compose.yml")
	require.NoError(t, err)
	compose := string(b)
	listed := composeServices(t, compose)

	s := synth(t, Props{})
	need := map[string]string{} // service -> why
	for _, sv := range deployServices {
		need[sv] = "cdk bootstrap and deploy"
	}
	resources, ok := s.json["Resources"].(map[string]any)
	require.True(t, ok)
	var unknown []string
	for id, r := range resources {
		res, _ := r.(map[string]any)
		typ, _ := res["Type"].(string)
		parts := strings.Split(typ, "::")
		switch {
		case len(parts) == 3 && parts[0] == "AWS":
			svcs, ok := localstackServices[parts[1]]
			if !ok {
				unknown = append(unknown, typ)
			}
			for _, sv := range svcs {
				need[sv] = typ
			}
		case strings.HasPrefix(typ, "Custom::") || typ == "AWS::CloudFormation::CustomResource":
			need["lambda"], need["cloudformation"] = typ, typ
		default:
			unknown = append(unknown, typ+" ("+id+")")
		}
		if typ == "AWS::DynamoDB::Table" {
			props, _ := res["Properties"].(map[string]any)
			if props["StreamSpecification"] != nil {
				need["dynamodbstreams"] = "the stream of " + id
			}
		}
	}
	sort.Strings(unknown)
	require.Empty(t, unknown, "resource types whose LocalStack service localstackServices does not name")
	require.Contains(t, need, "dynamodbstreams", "the outbox table has a stream")

	var missing []string
	for sv, why := range need {
		if !slices.Contains(listed, sv) {
			missing = append(missing, sv+" (for "+why+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "localstack/docker-compose.yml's SERVICES lacks these")

	// The deliver function runs in a Lambda container: it must reach the
	// host's receivers, and LocalStack's own calls to the host must resolve.
	require.Regexp(t, `(?m)^\s*-\s*LAMBDA_DOCKER_NETWORK=`, compose, "the Lambda containers' network is set")
	require.Contains(t, compose, "host.docker.internal:host-gateway", "host.docker.internal resolves to the host")
}
