//go:build ignore

// Writes clean_path_go.tsv: inputs and Go's own path/filepath.Clean of each (Linux), the
// reference tests/engine/clean_path_test.cpp holds engine/clean_path.h to. Every string of up to
// 6 characters over {'/', '.', 'a'} and 3,000 seeded random paths of elements that exercise the
// rules ("", ".", "..", "...", names, the device-list root's parts), rooted or not.
//
//	. /work/main/.cache/native/env.sh   # or any Go
//	go run tests/engine/testdata/clean_path_reference.go > tests/engine/testdata/clean_path_go.tsv
package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	emit := func(p string) { fmt.Fprintf(w, "%s\t%s\n", p, filepath.Clean(p)) }
	alphabet := []string{"/", ".", "a"}
	var all func(prefix string, n int)
	all = func(prefix string, n int) {
		emit(prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			all(prefix+c, n-1)
		}
	}
	all("", 6)
	elements := []string{"", "", ".", "..", "..", "...", ".a", "a.", "x", "var", "run",
		"nvidia-container-devices", "nvidia-container-devicesall", "all", "0"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		parts := make([]string, 1+r.Intn(12))
		for j := range parts {
			parts[j] = elements[r.Intn(len(elements))]
		}
		p := strings.Join(parts, "/")
		if r.Intn(3) > 0 {
			p = "/" + p
		}
		emit(p)
	}
}
