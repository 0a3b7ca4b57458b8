package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/pkg/k6convert"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// maxConvertInput bounds what convert reads: manifests, not data.
const maxConvertInput = 16 << 20

func newConvertCommand(o *options) *cobra.Command {
	var file, targetURL string
	cmd := &cobra.Command{
		Use:   "convert [-f FILE] [--target-url URL]",
		Short: "Rewrite k6-operator TestRuns (k6.io/v1alpha1) as fleetbench TestRuns",
		Long: `convert reads k6-operator v1.6 TestRuns (a file, or stdin with -f - or no -f) and writes
fleetbench TestRuns to stdout; other objects, such as the script's ConfigMap, pass through.
On stderr it says what it changed and, marked TODO, what you must still decide. k6-operator has
no target: the TestRun gets spec.target.external.url, --target-url or a placeholder that
admission refuses until you set it. A PrivateLoadZone cannot be converted.
See docs/migrating-from-k6-operator.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := o.streams.In
			if file != "" && file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer func() { _ = f.Close() }()
				in = f
			}
			return convert(in, o.streams.Out, o.streams.ErrOut, k6convert.Options{TargetURL: targetURL})
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the k6-operator manifest; - or none reads stdin")
	cmd.Flags().StringVar(&targetURL, "target-url", "", "the URL of the system the script loads, as spec.target.external.url")
	return cmd
}

// convert reads YAML or JSON documents from in, writes the converted ones to out and the notes to notes.
func convert(in io.Reader, out, notes io.Writer, opts k6convert.Options) error {
	raw, err := io.ReadAll(io.LimitReader(in, maxConvertInput+1))
	if err != nil {
		return err
	}
	if len(raw) > maxConvertInput {
		return fmt.Errorf("the input is larger than %d MiB", maxConvertInput>>20)
	}
	var docs []map[string]any
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		doc := map[string]any{}
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("reading the manifest: %w", err)
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return errors.New("no object in the input")
	}
	objs, ns, err := k6convert.Convert(docs, opts)
	if err != nil {
		return err
	}
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if i > 0 {
			_, _ = io.WriteString(out, "---\n")
		}
		_, _ = out.Write(b)
	}
	for _, n := range ns {
		_, _ = fmt.Fprintln(notes, textsafe.Text(n.String()))
	}
	return nil
}
