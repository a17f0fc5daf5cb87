// Package cmd wires kubectl captf's commands: flags in, engine calls, output
// out. The domain logic lives in the pkg/ packages it calls.
package cmd

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/version"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// NewCmdCaptf is the root command, `kubectl captf`. Its persistent flags are
// cli-runtime's ConfigFlags, so every subcommand takes --kubeconfig,
// --context, -n, --as, --request-timeout and the TLS flags as kubectl does.
func NewCmdCaptf(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newRoot(streams, nil)
	return cmd
}

// newRoot builds the command tree. f is the factory the commands use; nil
// builds it from the kubeconfig flags (tests give one built on fakes).
func newRoot(streams genericiooptions.IOStreams, f *factory) (*cobra.Command, *requestCounter) {
	flags := genericclioptions.NewConfigFlags(true)
	counter := newRequestCounter()
	if counter != nil {
		flags.WrapConfigFn = counter.wrap
	}
	if f == nil {
		f = newFactory(flags)
	}
	f.flags = flags
	cmd := &cobra.Command{
		Use:   "captf",
		Short: "See and safely clear the Terraform/OpenTofu state locks of CAPTF",
		Long: `kubectl captf shows the Terraform/OpenTofu state locks of CAPTF (Cluster API
Provider Terraform) and says, by CAPTF's own rules, whether the controller will
clear each one by itself. The verdicts follow the rules of CAPTF ` + version.CAPTFRules + `
(its controller source is the authority).

Flags go after the plugin name: kubectl captf --context x locks.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl captf"},
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			// Server warnings as kubectl prints them, not as klog lines,
			// and escaped: an admission webhook's message can quote any
			// object's fields.
			rest.SetDefaultWarningHandler(&warningPrinter{w: streams.ErrOut, seen: map[string]bool{}})
			// klog's lines only when -v asks for them, escaped too.
			// Without it, an error reaches the user once, as the one
			// "error:" line the command returns: the libraries' own
			// reports of it (discovery logs each failed attempt on an
			// unreachable server) would only repeat it, unescaped.
			var klogOut io.Writer = io.Discard
			if klog.V(1).Enabled() {
				klogOut = &escapingLines{w: streams.ErrOut}
			}
			klog.SetOutput(klogOut)
		},
	}
	flags.AddFlags(cmd.PersistentFlags())
	addVerbosityFlag(cmd)
	cmd.AddCommand(NewCmdLocks(f, streams), NewCmdExplain(f, streams), NewCmdUnlock(f, streams), NewCmdVersion(streams), NewCmdCompletion(streams))
	registerGlobalFlagCompletion(cmd, f.getter)
	return cmd, counter
}

// warningPrinter prints each server warning once, as kubectl does
// ("Warning: <message>"), escaped.
type warningPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool
}

func (p *warningPrinter) HandleWarningHeader(code int, _ string, message string) {
	if code != 299 || message == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen[message] {
		p.seen[message] = true
		warn(p.w, "", []string{message})
	}
}

// escapingLines writes each line written to it escaped (escape.Text),
// keeping the line breaks: klog writes whole lines.
type escapingLines struct {
	mu   sync.Mutex
	w    io.Writer
	rest []byte
}

func (e *escapingLines) Write(b []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rest = append(e.rest, b...)
	for {
		i := bytes.IndexByte(e.rest, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintln(e.w, escape.Text(string(e.rest[:i]))); err != nil {
			return 0, err
		}
		e.rest = e.rest[i+1:]
	}
}

// addVerbosityFlag adds kubectl's -v/--v: klog stays silent unless asked,
// and -v=6 traces every API request as kubectl's does. klog writes every
// line once, to the writer klog.SetOutput gives (which escapes it), and
// none straight to stderr: not to stderr itself (logtostderr), nor above a
// threshold (stderrthreshold past FATAL), nor to files of lower severities
// (one_output). Each command tree starts at -v=0: klog's settings are the
// process's, and a tree may run after another in one process (tests, the
// profiler).
func addVerbosityFlag(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": "false", "stderrthreshold": "4", "one_output": "true", "v": "0"} {
		_ = fs.Set(name, value)
	}
	v := pflag.PFlagFromGoFlag(fs.Lookup("v"))
	v.Shorthand = "v"
	cmd.PersistentFlags().AddFlag(v)
}
