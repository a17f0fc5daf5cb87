package inspect

// shortOperations are the runtimes' operation types, as a reader says them.
var shortOperations = map[string]string{
	"OperationTypeApply":   "apply",
	"OperationTypePlan":    "plan",
	"OperationTypeRefresh": "refresh",
	"OperationTypeInvalid": "invalid",
}

// ShortOperation is a lock's operation as every human output says it
// (the table, explain, unlock's report): "apply" for OperationTypeApply,
// the runtimes' other types likewise, any other value (init, state-rm,
// ...) as it is. JSON and YAML keep the lock info's own value.
func ShortOperation(op string) string {
	if s, ok := shortOperations[op]; ok {
		return s
	}
	return op
}
