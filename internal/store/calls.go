package store

// Call is one DynamoDB API action a Store method may make.
type Call struct {
	// Action is the DynamoDB API action, as IAM names it after
	// "dynamodb:": GetItem, BatchGetItem, PutItem, UpdateItem, DeleteItem,
	// BatchWriteItem, ConditionCheckItem, Query.
	Action string
	// Index is true for a Query of the table's indexes (IndexTenant;
	// IndexDead, which the readers of the dead list query with gsi1's
	// legacy partition; IndexLog), false for an action on the table.
	Index bool
}

var (
	getItem    = Call{Action: "GetItem"}
	batchGet   = Call{Action: "BatchGetItem"}
	putItem    = Call{Action: "PutItem"}
	updateItem = Call{Action: "UpdateItem"}
	deleteItem = Call{Action: "DeleteItem"}
	batchWrite = Call{Action: "BatchWriteItem"}
	// conditionCheck is a transaction's ConditionCheck, which IAM
	// authorizes as ConditionCheckItem.
	conditionCheck = Call{Action: "ConditionCheckItem"}
	query          = Call{Action: "Query"}
	queryIndex     = Call{Action: "Query", Index: true}
)

// Calls lists, for every exported Store method, each DynamoDB action it may
// make, on whichever path. A function's IAM grants follow from the methods
// it calls: the stack's template tests hold each function's role to the
// union of its methods' calls, and the store's tests hold this list to the
// code (a method that starts calling something else fails them). A
// TransactWriteItems is listed as the actions of its items, which is how IAM
// authorizes it. No method calls Scan; only RecordFirstAttempts calls
// BatchWriteItem;
// SealPlaintextSecrets, the operator's migration, is not a Store method and
// scans.
var Calls = map[string][]Call{
	"DLQDepths":                 {queryIndex},
	"ReconcileDLQDepth":         {batchGet, queryIndex, updateItem, conditionCheck, deleteItem},
	"RecordAttemptIfUnchanged":  {updateItem},
	"CreateJob":                 {putItem, updateItem},
	"TenantJobs":                {getItem},
	"ReleaseJob":                {updateItem},
	"IdleJobs":                  {queryIndex},
	"ClaimSweep":                {updateItem},
	"CreateEndpoint":            {putItem},
	"ListEndpoints":             {query},
	"CountEndpoints":            {query},
	"UpdateEndpoint":            {updateItem},
	"DeleteEndpoint":            {deleteItem},
	"PutNotifyEmail":            {getItem, putItem},
	"NotifyEmails":              {query},
	"NotifyEmail":               {getItem},
	"SetNotifyStatus":           {updateItem},
	"DeleteNotifyEmail":         {deleteItem},
	"TakeNotices":               {updateItem},
	"RotateSecret":              {getItem, updateItem},
	"SetEndpointEnabled":        {updateItem},
	"DeliveriesOfEvent":         {query, batchGet},
	"DeliveriesOfEvents":        {query, batchGet},
	"Load":                      {batchGet, query},
	"LoadWith":                  {batchGet, query},
	"ListDead":                  {queryIndex},
	"ListDeliveries":            {query, queryIndex},
	"ClaimForReplay":            {getItem, updateItem},
	"ReleaseReplay":             {updateItem},
	"SaveJob":                   {putItem},
	"Job":                       {getItem},
	"PutEndpoint":               {putItem},
	"Endpoint":                  {getItem},
	"Endpoints":                 {query},
	"Delivery":                  {getItem, query},
	"RecordAttempt":             {updateItem},
	"RecordFirstAttempts":       {batchWrite},
	"RecordResendAttempt":       {updateItem},
	"MarkDeadBeforeLastAttempt": {updateItem},
	"CancelDelivery":            {updateItem},
	"PutRejection":              {putItem},
	"Rejection":                 {getItem},
	"DisableEndpoint":           {updateItem},
	"RecordEndpointHealth":      {updateItem},
	"MarkEndpointDegraded":      {updateItem},
	"AddDeath":                  {updateItem},
	"DeadWindow":                {getItem},
	"CreateTenant":              {getItem, putItem},
	"Tenant":                    {getItem},
	"PutAPIKey":                 {getItem, conditionCheck, putItem},
	"TenantForKey":              {getItem},
	"TakeAPIRequest":            {updateItem},
	"RevokeAPIKey":              {getItem, queryIndex, updateItem},
	"PutPortalLink":             {getItem, putItem},
	"PortalLink":                {getItem},
	"RevokePortalLink":          {queryIndex, updateItem},
	"AddEndpointStats":          {updateItem},
	"AddEndpointTypeStats":      {updateItem},
	"TakeSlots":                 {updateItem},
	"TakeGate":                  {updateItem},
	"ReleaseGate":               {updateItem},
	"MarkGate":                  {updateItem},
	"EndpointStats":             {query},
	"EndpointTypeStats":         {query},
	"LastAttempts":              {query},
	"Tombstone":                 {getItem, putItem, queryIndex, query, updateItem},
	"Erased":                    {getItem},
	"TenantEndpoints":           {query},
	"EraseIndexed":              {getItem, query, queryIndex, deleteItem},
	"EraseDeliveries":           {batchGet, deleteItem},
	"EraseStats":                {query, deleteItem},
	"EraseTenantItems":          {query, batchGet, deleteItem},
}
