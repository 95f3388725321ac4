package cost

// Price is one unit price and where it was read.
type Price struct {
	// USD is the price in US dollars of one Unit.
	USD float64
	// Unit is what USD buys, as the source states it ("GB-second",
	// "1M requests", "GB").
	Unit string
	// Source is the address of the page the price was read from.
	Source string
	// Note is the caveat that goes with the price: its tier, what counts
	// as a unit, when it last changed.
	Note string
}

// Prices are the unit prices of one region, read on one date. The unit of
// each field is fixed (its comment says which); Estimate relies on it.
type Prices struct {
	// Region the prices are for.
	Region string
	// Date the prices were read, YYYY-MM-DD.
	Date string

	// LambdaArmGBSecond: USD per GB-second of arm64 duration, first tier.
	LambdaArmGBSecond Price
	// LambdaRequests: USD per 1M invocations.
	LambdaRequests Price
	// SQSRequests: USD per 1M standard-queue requests, first tier; every
	// 64 KB chunk of a request's payload is a request.
	SQSRequests Price
	// DynamoDBWrites: USD per 1M on-demand write request units, Standard
	// table class.
	DynamoDBWrites Price
	// DynamoDBReads: USD per 1M on-demand read request units, Standard
	// table class.
	DynamoDBReads Price
	// DynamoDBStorage: USD per GB-month of table and index storage.
	DynamoDBStorage Price
	// DynamoDBBackup: USD per GB-month of point-in-time recovery, billed on
	// the table's size.
	DynamoDBBackup Price
	// LogsIngestion: USD per GB ingested into CloudWatch Logs, Standard log
	// class, first tier of Lambda's tiered log pricing.
	LogsIngestion Price
	// DataTransferOut: USD per GB sent from the region to the internet,
	// first tier.
	DataTransferOut Price
	// KMSRequests: USD per 1M requests to AWS KMS with a symmetric key
	// (Encrypt, Decrypt).
	KMSRequests Price
	// SNSPublish: USD per 1M publishes to a standard topic; every 64 KB
	// chunk of a payload is a publish. Billed to the topic's owner.
	SNSPublish Price
	// EventBridgeEvents: USD per 1M custom events put on a bus; every
	// 64 KB chunk of an entry is an event. Billed to the bus's owner.
	EventBridgeEvents Price
	// NATGatewayHour: USD per NAT gateway per hour provisioned, and
	// NATGatewayData: USD per GB it processes, either direction. Static
	// egress only (StaticEgressMonthly, StaticEgress.PerMillion).
	NATGatewayHour, NATGatewayData Price
	// PublicIPv4Hour: USD per public IPv4 address per hour, an Elastic IP
	// on a NAT gateway included. Static egress only.
	PublicIPv4Hour Price
	// InterfaceEndpointHour: USD per interface VPC endpoint per zone per
	// hour, and InterfaceEndpointData: USD per GB it processes. Not
	// deployed: InterfaceEndpointBreakEvenGB says why.
	InterfaceEndpointHour, InterfaceEndpointData Price
	// KMSKey: USD per customer-managed key per month. Not used by
	// Estimate: the signing secrets' key is billed per month, not per
	// delivery.
	KMSKey Price
	// CustomMetric: USD per custom metric per month, first tier. Not used
	// by Estimate: a metric is billed per month it exists, not per delivery.
	CustomMetric Price
}

// Default holds us-east-1 prices as read on its Date through the search
// tool's stored copies of the pages named (not live pages). AWS's own
// pricing pages render their rate tables in the browser, so several values
// come from third-party pages that quote them; each Source says which page.
var Default = Prices{
	Region: "us-east-1",
	Date:   "2026-11-30",
	LambdaArmGBSecond: Price{
		USD:    0.0000133334,
		Unit:   "GB-second",
		Source: "https://cloudchipr.com/blog/aws-lambda-pricing",
		Note: "arm64, first 7.5 billion GB-s a month; $0.0000120001 for the next 11.25 billion, " +
			"20% off beyond 18.75 billion (tiers: https://aws.amazon.com/blogs/compute/introducing-tiered-pricing-for-aws-lambda/). " +
			"Duration is rounded up to 1 ms; custom runtimes (provided.al2023) are billed their init duration too.",
	},
	LambdaRequests: Price{
		USD:    0.20,
		Unit:   "1M requests",
		Source: "https://cloudchipr.com/blog/aws-lambda-pricing",
		Note:   "same for x86 and arm64; an event source mapping's invocation is a request",
	},
	SQSRequests: Price{
		USD:    0.40,
		Unit:   "1M requests",
		Source: "https://cloudburn.io/blog/amazon-sqs-pricing",
		Note: "standard queue, first 100 billion a month ($0.30 next 100 billion, $0.24 beyond); each 64 KB chunk " +
			"of a payload is billed as one request (https://www.factualminds.com/blog/amazon-sqs-pricing-64kb-rule-fifo-vs-standard/); " +
			"the Lambda event source mapping's receives and deletes are billed to the queue owner",
	},
	DynamoDBWrites: Price{
		USD:    0.625,
		Unit:   "1M write request units",
		Source: "https://airbyte.com/data-engineering-resources/dynamodb-pricing",
		Note: "on-demand, halved from $1.25 on 2024-11-01 (https://www.jusdb.com/blog/dynamodb-cost-optimization-a-comprehensive-guide-by-jusdb); " +
			"one WRU per started 1 KB of the item (an update: the larger of before and after), each GSI written costs its own; " +
			"a transactional write costs 2x (https://aws.amazon.com/dynamodb/pricing/on-demand/)",
	},
	DynamoDBReads: Price{
		USD:    0.125,
		Unit:   "1M read request units",
		Source: "https://airbyte.com/data-engineering-resources/dynamodb-pricing",
		Note:   "on-demand, halved from $0.25 on 2024-11-01; one RRU per started 4 KB strongly consistent, half eventually consistent, 2x transactional",
	},
	DynamoDBStorage: Price{
		USD:    0.25,
		Unit:   "GB-month",
		Source: "https://aws.amazon.com/dynamodb/pricing/",
		Note:   "Standard table class; first 25 GB a month free; each item and each index entry carries 100 bytes of overhead",
	},
	DynamoDBBackup: Price{
		USD:    0.20,
		Unit:   "GB-month",
		Source: "https://finops.com.py/services/dynamodb/backups",
		Note:   "continuous backups (PITR), on table size; third-party page, undated: not confirmed on an AWS page",
	},
	LogsIngestion: Price{
		USD:    0.50,
		Unit:   "GB",
		Source: "https://www.duckbillgroup.com/?p=9080",
		Note: "Standard log class; Lambda logs tiered since 2025-05-01: $0.50 first 10 TB, $0.25 next 20 TB, $0.10 next 20 TB, $0.05 beyond; " +
			"EMF lines are billed as log bytes like any other line",
	},
	DataTransferOut: Price{
		USD:    0.09,
		Unit:   "GB",
		Source: "https://wring.co/blog/aws-data-transfer-pricing-guide",
		Note:   "to the internet, first 10 TB a month after 100 GB free; Lambda's outbound traffic is billed at these rates",
	},
	KMSRequests: Price{
		USD:    3,
		Unit:   "1M requests",
		Source: "https://www.wring.co/blog/aws-kms-pricing-guide",
		Note: "$0.03 per 10,000 symmetric requests after 20,000 free a month (account-wide); " +
			"the rules (free tier, what a request is) on https://aws.amazon.com/kms/pricing/",
	},
	SNSPublish: Price{
		USD:    0.50,
		Unit:   "1M requests",
		Source: "https://www.factualminds.com/blog/amazon-sns-pricing-publishes-fanout-protocols/",
		Note: "standard topic ($0.30 FIFO); each 64 KB chunk is a request; delivery to an SQS subscription is free, " +
			"to HTTP $0.60 per 1M; billed to the account that owns the topic",
	},
	EventBridgeEvents: Price{
		USD:    1,
		Unit:   "1M events",
		Source: "https://cloudburn.io/blog/amazon-eventbridge-pricing",
		Note: "custom events put on a bus, each 64 KB chunk an event; delivery to a target in the same account free; " +
			"billed to the account that owns the bus",
	},
	NATGatewayHour: Price{
		USD:    0.045,
		Unit:   "NAT gateway-hour",
		Source: "https://basavytix.com/blog/aws-nat-gateway-pricing",
		Note: "us-east-1; billed from creation to deletion, traffic or not ($32.85 a month); " +
			"the same rate at https://cloudburn.io/blog/aws-nat-gateway-pricing (2026-02-24)",
	},
	NATGatewayData: Price{
		USD:    0.045,
		Unit:   "GB",
		Source: "https://basavytix.com/blog/aws-nat-gateway-pricing",
		Note: "us-east-1; every GB the gateway processes, both directions, whatever the destination; " +
			"on top of data transfer out; a gateway in another zone than the sender adds $0.01 a GB each way (hookline routes each zone to its own)",
	},
	PublicIPv4Hour: Price{
		USD:    0.005,
		Unit:   "IPv4 address-hour",
		Source: "https://www.doit.com/aws-public-ipv4-price-increase-the-complete-guide/",
		Note:   "every public IPv4 address since 2024-02-01, an Elastic IP on a NAT gateway included ($3.65 a month)",
	},
	InterfaceEndpointHour: Price{
		USD:    0.01,
		Unit:   "endpoint-zone-hour",
		Source: "https://www.egresscost.com/nat-gateway",
		Note: "per interface endpoint per availability zone, partial hours billed whole ($7.30 a month a zone); " +
			"the billing rules at https://aws.amazon.com/privatelink/pricing/",
	},
	InterfaceEndpointData: Price{
		USD:    0.01,
		Unit:   "GB",
		Source: "https://www.egresscost.com/nat-gateway",
		Note: "first 1 PB a month in the region, less beyond; billed for every GB through the endpoint whatever its source or " +
			"destination (https://aws.amazon.com/privatelink/pricing/)",
	},
	KMSKey: Price{
		USD:    1,
		Unit:   "key-month",
		Source: "https://aws.amazon.com/kms/pricing/",
		Note:   "each customer-managed key; with automatic rotation, each newly generated backing key adds $1 a month (the page's wording)",
	},
	CustomMetric: Price{
		USD:    0.30,
		Unit:   "metric-month",
		Source: "https://cal53.calculator.city/cloudwatch-custom-metrics-calculator/",
		Note: "first 10,000 metrics; a metric is a name and dimension-value set; EMF metrics cost log ingestion plus this, " +
			"with no PutMetricData charge (https://docs.aws.amazon.com/zh_tw/wellarchitected/latest/serverless-applications-lens/logging-ingestion-and-storage.html); " +
			"only a third-party calculator page was found stating the value",
	},
}
