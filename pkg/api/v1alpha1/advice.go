package v1alpha1

// Advice is one thing an operator can do: a command, with a comment that
// says when to run it, or a comment alone. The command is data (Argv) and
// text to paste (Command), never parsed back from one another.
type Advice struct {
	// Comment says what the command is for, or is a note on its own.
	Comment string `json:"comment,omitempty"`
	// Argv is the command as built: the program and its arguments,
	// connection flags (--context, --kubeconfig, ...) included.
	Argv []string `json:"argv,omitempty"`
	// Command is Argv quoted for an interactive bash or zsh (single
	// quotes; history expansion on), one line; empty when an argument
	// holds characters that cannot be pasted safely (Unprintable says
	// which).
	Command string `json:"command,omitempty"`
	// Unprintable says why Command is empty.
	Unprintable string `json:"unprintable,omitempty"`
}
