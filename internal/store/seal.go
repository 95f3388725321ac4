package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// MigrationDB is what SealPlaintextSecrets needs of DynamoDB. It scans the
// whole table, which no function's role may: the operator runs it with
// their own credentials.
type MigrationDB interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

var _ MigrationDB = (*dynamodb.Client)(nil)

// SealFunc seals a signing secret for the endpoint ref names
// (sealing.Sealer.Seal, adapted).
type SealFunc func(ctx context.Context, ref EndpointRef, plaintext string) (string, error)

// SealReport counts what SealPlaintextSecrets did.
type SealReport struct {
	// Sealed endpoints no longer hold a plaintext secret.
	Sealed int
	// Changed endpoints were rotated or updated while they were being
	// sealed and were left alone: run it again.
	Changed int
}

// SealPlaintextSecrets replaces every plaintext signing secret in table
// (endpoints written before secrets were sealed: `secrets`,
// `retiring_secret`) with its sealed form (`sealed_secrets`,
// `sealed_retiring_secret`), one conditional update per endpoint, so a
// rotation at the same moment is never overwritten (it is counted as
// Changed). A plaintext secret beside a sealed one (the sealed one signs)
// is removed. Running it again does nothing more.
func SealPlaintextSecrets(ctx context.Context, db MigrationDB, table string, seal SealFunc) (SealReport, error) {
	var rep SealReport
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{
		TableName:                 &table,
		FilterExpression:          aws.String("begins_with(sk, :ep) AND (attribute_exists(secrets) OR attribute_exists(retiring_secret))"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":ep": &types.AttributeValueMemberS{Value: keys.EndpointPrefix}},
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return rep, fmt.Errorf("scan for plaintext secrets: %w", err)
		}
		for _, item := range page.Items {
			var e domain.Endpoint
			if err := attributevalue.UnmarshalMap(item, &e); err != nil {
				return rep, fmt.Errorf("decode endpoint: %w", err)
			}
			changed, err := sealEndpoint(ctx, db, table, e, seal)
			if err != nil {
				return rep, err
			}
			if changed {
				rep.Changed++
			} else {
				rep.Sealed++
			}
		}
	}
	return rep, nil
}

// sealEndpoint seals one endpoint's plaintext secrets; changed is true when
// the endpoint changed since it was read.
func sealEndpoint(ctx context.Context, db MigrationDB, table string, e domain.Endpoint, seal SealFunc) (changed bool, err error) {
	ref := EndpointRef{TenantID: e.TenantID, EndpointID: e.EndpointID}
	var set, conds []string
	remove := []string{"secrets", "retiring_secret"}
	values := map[string]types.AttributeValue{}
	if len(e.Secrets) > 0 {
		values[":old"], _ = attributevalue.Marshal(e.Secrets)
		conds = append(conds, "secrets = :old")
		if len(e.SealedSecrets) == 0 {
			sealed := make([]string, len(e.Secrets))
			for i, s := range e.Secrets {
				if sealed[i], err = seal(ctx, ref, s); err != nil {
					return false, fmt.Errorf("seal the secrets of endpoint %s of tenant %s: %w", e.EndpointID, e.TenantID, err)
				}
			}
			values[":sealed"], _ = attributevalue.Marshal(sealed)
			set = append(set, "sealed_secrets = :sealed")
			conds = append(conds, "attribute_not_exists(sealed_secrets)")
		}
	} else {
		conds = append(conds, "attribute_not_exists(secrets)")
	}
	if e.RetiringSecret != "" {
		values[":oldr"] = &types.AttributeValueMemberS{Value: e.RetiringSecret}
		conds = append(conds, "retiring_secret = :oldr")
		if e.SealedRetiringSecret == "" {
			sealed, err := seal(ctx, ref, e.RetiringSecret)
			if err != nil {
				return false, fmt.Errorf("seal the retiring secret of endpoint %s of tenant %s: %w", e.EndpointID, e.TenantID, err)
			}
			values[":sealedr"] = &types.AttributeValueMemberS{Value: sealed}
			set = append(set, "sealed_retiring_secret = :sealedr")
			conds = append(conds, "attribute_not_exists(sealed_retiring_secret)")
		}
	} else {
		conds = append(conds, "attribute_not_exists(retiring_secret)")
	}
	expr := "REMOVE " + strings.Join(remove, ", ")
	if len(set) > 0 {
		expr = "SET " + strings.Join(set, ", ") + " " + expr
	}
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &table, Key: endpointKey(e.TenantID, e.EndpointID),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(pk) AND " + strings.Join(conds, " AND ")),
		ExpressionAttributeValues: values,
	})
	if isConditionFailed(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("seal the secrets of endpoint %s of tenant %s: %w", e.EndpointID, e.TenantID, err)
	}
	return false, nil
}
