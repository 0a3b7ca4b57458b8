// imgpack builds a single-layer linux/amd64 OCI image tarball from local files, with no
// Docker daemon and no registry: containerd imports the result with `ctr images import`.
//
//	imgpack -name fleetbench/runner:dev -out bin/images/runner.tar \
//	  -file bin/fleetbench-runner:/usr/local/bin/k6 -entrypoint /usr/local/bin/k6 -user 65532
//
// A -rootfs tarball (for example a debootstrapped Debian) becomes a layer below the files.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var files, envs, entrypoint, cmd listFlag
	imageName := flag.String("name", "", "image reference, e.g. fleetbench/runner:dev (required)")
	out := flag.String("out", "", "output tarball path (required)")
	rootfs := flag.String("rootfs", "", "optional tarball used as the bottom layer")
	user := flag.String("user", "", "user the image runs as, e.g. 65532")
	workdir := flag.String("workdir", "", "working directory")
	flag.Var(&files, "file", "SRC:DST file to add (repeatable); mode is kept")
	flag.Var(&envs, "env", "KEY=VALUE (repeatable)")
	flag.Var(&entrypoint, "entrypoint", "entrypoint argument (repeatable, in order)")
	flag.Var(&cmd, "cmd", "cmd argument (repeatable, in order)")
	flag.Parse()
	if *imageName == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*imageName, *out, *rootfs, *user, *workdir, files, envs, entrypoint, cmd); err != nil {
		fmt.Fprintln(os.Stderr, "imgpack:", err)
		os.Exit(1)
	}
}

func run(imageName, out, rootfs, user, workdir string, files, envs, entrypoint, cmd []string) error {
	ref, err := name.ParseReference(imageName, name.WithDefaultRegistry("docker.io"))
	if err != nil {
		return fmt.Errorf("-name %q: %w", imageName, err)
	}
	img := empty.Image
	if rootfs != "" {
		layer, err := tarball.LayerFromFile(rootfs)
		if err != nil {
			return fmt.Errorf("-rootfs %s: %w", rootfs, err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		data, err := filesLayer(files)
		if err != nil {
			return err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		})
		if err != nil {
			return err
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return err
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	// containerd's import skips images whose config names no platform.
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = entrypoint
	cfg.Config.Cmd = cmd
	cfg.Config.User = user
	cfg.Config.WorkingDir = workdir
	cfg.Config.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, envs...)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// filesLayer writes each SRC:DST pair, with the parent directories, into one tar layer.
func filesLayer(files []string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	epoch := time.Unix(0, 0)
	for _, f := range files {
		src, dst, ok := strings.Cut(f, ":")
		if !ok || !strings.HasPrefix(dst, "/") {
			return nil, fmt.Errorf("-file %q: want SRC:/absolute/DST", f)
		}
		for d := filepath.Dir(dst); d != "/" && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		info, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("-file %q: %w", f, err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		for _, d := range parents(dst) {
			if dirs[d] {
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: epoch}); err != nil {
					return nil, err
				}
				delete(dirs, d)
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(dst, "/"), Mode: int64(info.Mode().Perm()), Size: int64(len(data)), ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// parents lists the directories above p, outermost first.
func parents(p string) []string {
	var out []string
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}
