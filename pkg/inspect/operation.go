package inspect

// shortOperations are the runtimes' operation types, as a reader says them.
var shortOperations = map[string]string{
	"OperationTypeApply":   "apply",
	"OperationTypePlan":    "plan",
	"OperationTypeRefresh": "refresh",
	"OperationTypeInvalid": "invalid",
}

// ShortOperation is a lock's operation as every human output says it
// (the table; QuotedOperation on explain's Holder line and where Who is
// quoted): "apply" for OperationTypeApply,
// the runtimes' other types likewise, any other value (init, state-rm,
// ...) as it is. JSON and YAML keep the lock info's own value.
func ShortOperation(op string) string {
	if s, ok := shortOperations[op]; ok {
		return s
	}
	return op
}

// QuotedOperation is ShortOperation for a sentence that quotes the other
// holder-written fields beside it (unlock's Holder line, explain's lock
// info step: Who and the lock ID are Go-quoted there), or shares a line
// with the plugin's words (explain's Holder line): a known type
// short, any other value Go-quoted as they are, so that a holder cannot
// write one that passes for the plugin's words (`apply, lock ID "…"`
// would fake the rest of the line) or for a known type (a literal
// "apply" shows quoted).
func QuotedOperation(op string) string {
	if s, ok := shortOperations[op]; ok {
		return s
	}
	return Quoted(op)
}
