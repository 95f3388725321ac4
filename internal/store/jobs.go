package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// openJobsPartition is the index partition of every job not completed
// (gsi1sk = <updated_at>#<job id>), so that jobs whose message was lost are
// found without a scan.
var openJobsPartition = keys.OpenJobs

// ErrTooManyJobs is CreateJob's answer when the tenant has as many open
// (queued or running) jobs as the limit allows.
var ErrTooManyJobs = errors.New("too many jobs open")

// jobItem readies a job for a write: it bumps Version, stamps UpdatedAt
// (and CreatedAt for a new job) and marshals it, with its TTL and, until it
// is completed (CompletedAt set), its entry in the open jobs' index. It
// returns the version it had; the caller restores it if the write fails.
func (s *Store) jobItem(j *domain.Job) (map[string]types.AttributeValue, int, error) {
	prev := j.Version
	j.Version++
	j.UpdatedAt = s.Now().UTC()
	if prev == 0 {
		j.CreatedAt = j.UpdatedAt
	}
	item, err := attributevalue.MarshalMap(j)
	if err == nil {
		err = putArgs(item, j.Args)
	}
	if err != nil {
		j.Version = prev
		return nil, prev, fmt.Errorf("marshal job %s: %w", j.JobID, err)
	}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(j.CreatedAt.Add(s.Retention).Unix(), 10)}
	if j.CompletedAt == nil {
		item["gsi1pk"] = &types.AttributeValueMemberS{Value: openJobsPartition}
		item["gsi1sk"] = &types.AttributeValueMemberS{Value: keys.TimeID(j.UpdatedAt, j.JobID)}
	} else if j.TenantID != "" {
		// A tenant's completed job, listed for its tenant's erasure.
		item["gsi1pk"] = &types.AttributeValueMemberS{Value: keys.JobsIndex(j.TenantID)}
		item["gsi1sk"] = &types.AttributeValueMemberS{Value: j.JobID}
	}
	return withKey(item, jobKey(j.JobID)), prev, nil
}

// SaveJob writes a job: a new one (Version 0) only if it does not exist, an
// existing one only if nobody saved it since it was read (ErrConflict). A
// write whose condition fails because the item is already this very write
// (the SDK sent the put again after its first answer was lost: a timeout, a
// response failing its checksum under load) succeeds: concurrent operator
// redrives answered 500 ("replay job rj_...: conflicting change") on the
// local cloud for want of this.
func (s *Store) SaveJob(ctx context.Context, j *domain.Job) error {
	item, prev, err := s.jobItem(j)
	if err != nil {
		return err
	}
	in := &dynamodb.PutItemInput{TableName: &s.table, Item: item,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	if prev == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(prev)}}
	}
	_, err = s.db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if sameWrite(item, ccf.Item) {
			return nil
		}
		j.Version = prev
		return fmt.Errorf("job %s: %w", j.JobID, ErrConflict)
	}
	if err != nil {
		j.Version = prev
		return fmt.Errorf("save job %s: %w", j.JobID, err)
	}
	return nil
}

// sameWrite reports whether the job item found, old, is the one mine
// writes, attribute for attribute: a save's every write bumps the version
// and stamps updated_at, so only a second send of the same write finds it
// (or a write of exactly the same job, which leaves what this one would).
func sameWrite(mine, old map[string]types.AttributeValue) bool {
	return old != nil && reflect.DeepEqual(mine, old)
}

// CreateJob records a new job (Version 0; ErrConflict if its id exists). A
// tenant's job, when limit is above zero, also takes one of the tenant's
// limit places for open jobs, in the same transaction: with limit jobs of
// the tenant open, nothing is written and the answer is ErrTooManyJobs,
// however many requests arrive at once. ReleaseJob gives the place back.
func (s *Store) CreateJob(ctx context.Context, j *domain.Job, limit int) error {
	if j.Version != 0 {
		return fmt.Errorf("create job %s: version %d: %w", j.JobID, j.Version, ErrConflict)
	}
	if j.TenantID == "" || limit <= 0 {
		return s.SaveJob(ctx, j)
	}
	item, _, err := s.jobItem(j)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{
			TableName: &s.table, Key: jobSlotsKey(j.TenantID),
			UpdateExpression:    aws.String("ADD open_jobs :job SET tenant_id = :tenant"),
			ConditionExpression: aws.String("attribute_not_exists(open_jobs) OR size(open_jobs) < :limit"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":job":    &types.AttributeValueMemberSS{Value: []string{j.JobID}},
				":tenant": &types.AttributeValueMemberS{Value: j.TenantID},
				":limit":  &types.AttributeValueMemberN{Value: strconv.Itoa(limit)},
			},
		}},
	}})
	if err == nil {
		return nil
	}
	j.Version = 0
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		failed := func(i int) bool {
			return i < len(tce.CancellationReasons) && aws.ToString(tce.CancellationReasons[i].Code) == "ConditionalCheckFailed"
		}
		switch {
		case failed(0):
			return fmt.Errorf("job %s: %w", j.JobID, ErrConflict)
		case failed(1):
			return fmt.Errorf("tenant %s: %d jobs open: %w", j.TenantID, limit, ErrTooManyJobs)
		}
	}
	return fmt.Errorf("create job %s: %w", j.JobID, err)
}

// TenantJobs returns the ids of a tenant's open jobs, as CreateJob counts
// them (a strongly consistent read).
func (s *Store) TenantJobs(ctx context.Context, tenantID string) ([]string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: jobSlotsKey(tenantID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read open jobs of tenant %s: %w", tenantID, err)
	}
	ids, _ := out.Item["open_jobs"].(*types.AttributeValueMemberSS)
	if ids == nil {
		return nil, nil
	}
	return ids.Value, nil
}

// ReleaseJob gives back the place a tenant's job took: once it completed, or
// when it is found completed or gone. Releasing twice is harmless.
func (s *Store) ReleaseJob(ctx context.Context, tenantID, jobID string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: jobSlotsKey(tenantID),
		UpdateExpression:    aws.String("DELETE open_jobs :job"),
		ConditionExpression: aws.String("contains(open_jobs, :id)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":job": &types.AttributeValueMemberSS{Value: []string{jobID}},
			":id":  &types.AttributeValueMemberS{Value: jobID},
		},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release job %s of tenant %s: %w", jobID, tenantID, err)
	}
	return nil
}

// IdleJobs returns up to limit jobs not completed and not saved since
// before, least recently saved first, from the open jobs' index (eventually
// consistent: a job saved a moment ago may still be listed; its Version
// tells).
func (s *Store) IdleJobs(ctx context.Context, before time.Time, limit int) ([]domain.Job, error) {
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :p AND gsi1sk < :before"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p":      &types.AttributeValueMemberS{Value: openJobsPartition},
			":before": &types.AttributeValueMemberS{Value: sortableTime(before)},
		},
	}
	var out []domain.Job
	for len(out) < limit {
		in.Limit = aws.Int32(int32(limit - len(out)))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list idle jobs: %w", err)
		}
		for _, item := range page.Items {
			j, err := decodeJob(item)
			if err != nil {
				return nil, fmt.Errorf("idle jobs: %w", err)
			}
			out = append(out, j)
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

// Job reads a job, or ErrNotFound. Its Args are StoredArgs.
func (s *Store) Job(ctx context.Context, id string) (domain.Job, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: jobKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return domain.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	if out.Item == nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return decodeJob(out.Item)
}

// decodeJob reads a job's record: the fields every job has, and the rest
// of its attributes, but its key's, index entry's and TTL's, as its
// StoredArgs.
func decodeJob(item map[string]types.AttributeValue) (domain.Job, error) {
	var j domain.Job
	if err := attributevalue.UnmarshalMap(item, &j); err != nil {
		return j, fmt.Errorf("decode job: %w", err)
	}
	args := storedArgs{kind: j.Kind, item: map[string]types.AttributeValue{}}
	for name, v := range item {
		if !jobAttributes[name] {
			args.item[name] = v
		}
	}
	j.Args = args
	return j, nil
}

// storedArgs are a job's own attributes as read (domain.StoredArgs).
type storedArgs struct {
	kind domain.JobKind
	item map[string]types.AttributeValue
}

func (a storedArgs) JobKind() domain.JobKind { return a.kind }

func (a storedArgs) DecodeArgs(into any) error {
	if err := attributevalue.UnmarshalMap(a.item, into); err != nil {
		return fmt.Errorf("decode the arguments of a %s job: %w", a.kind, err)
	}
	return nil
}

// jobAttributes are the attributes of a job's item that are not its
// arguments': domain.Job's own, its key, its index entry and its TTL.
var jobAttributes = func() map[string]bool {
	names := map[string]bool{"pk": true, "sk": true, "gsi1pk": true, "gsi1sk": true, "expires_at": true}
	t := reflect.TypeFor[domain.Job]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("dynamodbav"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}()

// putArgs adds a job's arguments to its item: as read (StoredArgs from
// this store), or marshalled from their kind's type, whose attribute names
// must not be any of a job's own.
func putArgs(item map[string]types.AttributeValue, args domain.JobArgs) error {
	var attrs map[string]types.AttributeValue
	switch a := args.(type) {
	case nil:
		return nil
	case storedArgs:
		attrs = a.item
	default:
		var err error
		if attrs, err = attributevalue.MarshalMap(a); err != nil {
			return fmt.Errorf("arguments %T: %w", a, err)
		}
	}
	for name, v := range attrs {
		if jobAttributes[name] {
			return fmt.Errorf("arguments %T: attribute %q is a job's own", args, name)
		}
		item[name] = v
	}
	return nil
}
