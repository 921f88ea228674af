// Command native-harness runs gpuadmit's webhook and its native admission policies
// (ValidatingAdmissionPolicy, MutatingAdmissionPolicy) through Kubernetes 1.36's own admission
// plugins (k8s.io/apiserver), in-process. See README.md beside this file.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"
)

const usage = `usage: native-harness [-v] COMMAND [FLAGS]

commands:
  webhook  --gpuadmit BIN --cases DIR    golden cases through gpuadmit serve and the webhook plugins
  check    [--containers N] FILE...      load native policies: defaults, CEL compile errors, CEL costs
  diff     --gpuadmit BIN [--generate N] [--seed S] [--native F --table F --policy P]
                                         golden cases and generated objects: webhook vs native policies
  bench    --gpuadmit BIN [--native F]   per-admission cost: native policies beside the webhook
  static   --gpuadmit BIN [--policy P]   render --native-static (KEP-5793) loaded from its files:
                                         admits as the same policies created through the API
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	global := flag.NewFlagSet("native-harness", flag.ContinueOnError)
	global.SetOutput(stderr)
	verbose := global.Bool("v", false, "show the plugins' logs (klog)")
	if err := global.Parse(args); err != nil || global.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	quietKlog(*verbose)
	if *verbose {
		Progress = stderr
	}
	cmd, rest := global.Arg(0), global.Args()[1:]
	var err error
	switch cmd {
	case "webhook":
		err = webhookCommand(rest, stdout, stderr)
	case "check":
		err = checkCommand(rest, stdout, stderr)
	case "diff":
		err = diffCommand(rest, stdout, stderr)
	case "bench":
		err = benchCommand(rest, stdout, stderr)
	case "static":
		err = staticCommand(rest, stdout, stderr)
	default:
		fmt.Fprint(stderr, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "native-harness %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// quietKlog keeps the plugins' informational logs (cache syncs, policy refreshes) off stderr.
func quietKlog(verbose bool) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if verbose {
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

func webhookCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("gpuadmit", "", "the gpuadmit binary (CMake builds it as build/gpuadmit)")
	casesDir := fs.String("cases", "tests/cases", "the golden cases")
	notes := fs.String("notes", "tests/native/testdata/webhook-cases.yaml", "how cases read through the API server")
	work := fs.String("work", "", "a directory for certificates (default: a new temporary one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" {
		return fmt.Errorf("--gpuadmit is required")
	}
	dir, cleanup, err := workDir(*work)
	if err != nil {
		return err
	}
	defer cleanup()
	g, err := NewGpuadmit(*binary, dir)
	if err != nil {
		return err
	}
	cases, err := LoadCases(*casesDir)
	if err != nil {
		return err
	}
	if err := LoadCaseNotes(*notes, cases); err != nil {
		return err
	}
	start := time.Now()
	outcomes, err := RunWebhookCases(g, cases)
	if err != nil {
		return err
	}
	passed, skipped, failed := 0, 0, 0
	for _, o := range outcomes {
		switch {
		case o.Skipped != "":
			skipped++
			fmt.Fprintf(stdout, "SKIP %s: %s\n", o.Case, o.Skipped)
		case len(o.Problems) > 0:
			failed++
			fmt.Fprintf(stdout, "FAIL %s\n", o.Case)
			for _, p := range o.Problems {
				fmt.Fprintf(stdout, "  %s\n", p)
			}
		default:
			passed++
		}
	}
	fmt.Fprintf(stdout, "webhook: %d golden cases through gpuadmit serve and the webhook plugins: "+
		"%d passed, %d failed, %d skipped (%.1f s)\n", len(outcomes), passed, failed, skipped,
		time.Since(start).Seconds())
	if failed > 0 {
		return fmt.Errorf("%d golden cases failed", failed)
	}
	return nil
}

func workDir(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		abs, err := filepath.Abs(dir)
		return abs, func() {}, err
	}
	tmp, err := os.MkdirTemp("", "gpuadmit-native-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}
