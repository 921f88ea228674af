package main

// Comparing two versions of an object as Kubernetes compares them: structured-merge-diff over
// the type's schema (client-go's applyconfigurations schema for built-in kinds, the same one
// server-side apply uses), so a list with a merge key (containers by name, env by name) is
// compared element by element by key and its order does not count, a set by value, an atomic
// list (tolerations, nodeSelectorTerms, matchExpressions) in order; quantities by value.
// Custom resources have no schema here: the deduced schema (managedfields.
// NewDeducedTypeConverter) compares their lists in order and their maps by key.

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var (
	convertersOnce sync.Once
	typedConverter managedfields.TypeConverter
	deducedConvert managedfields.TypeConverter
)

func converters() (managedfields.TypeConverter, managedfields.TypeConverter) {
	convertersOnce.Do(func() {
		typedConverter = applyconfigurations.NewTypeConverter(Scheme)
		deducedConvert = managedfields.NewDeducedTypeConverter()
	})
	return typedConverter, deducedConvert
}

// Diff lists the field paths where b differs from a (removed, changed or added); none when the
// two are the same object to Kubernetes.
func Diff(a, b runtime.Object) ([]string, error) {
	typed, deduced := converters()
	tc := typed
	if _, ok := a.(*unstructured.Unstructured); ok {
		tc = deduced
	}
	ua, err := comparable(a)
	if err != nil {
		return nil, err
	}
	ub, err := comparable(b)
	if err != nil {
		return nil, err
	}
	ta, err := tc.ObjectToTyped(ua)
	if err != nil {
		return nil, fmt.Errorf("typed %s: %w", a.GetObjectKind().GroupVersionKind().Kind, err)
	}
	tb, err := tc.ObjectToTyped(ub)
	if err != nil {
		return nil, fmt.Errorf("typed %s: %w", b.GetObjectKind().GroupVersionKind().Kind, err)
	}
	c, err := ta.Compare(tb)
	if err != nil {
		return nil, err
	}
	if c.IsSame() {
		return nil, nil
	}
	var out []string
	add := func(prefix string, s *fieldpath.Set) {
		s.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, prefix+p.String()) })
	}
	add("removed ", c.Removed)
	add("changed ", c.Modified)
	add("added ", c.Added)
	sort.Strings(out)
	return out, nil
}

// comparable is the object as unstructured JSON with its kind set (the typed converter finds
// the schema by the kind), without the fields the API server sets on storing it.
func comparable(obj runtime.Object) (runtime.Object, error) {
	content, err := ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if md, ok := content["metadata"].(map[string]interface{}); ok {
		delete(md, "creationTimestamp")
		delete(md, "managedFields")
	}
	return u, nil
}
