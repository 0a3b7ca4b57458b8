package runners

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPerRunnerNumbering(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"none", `export default function () { http.get('http://x/'); }`, nil},
		{"__VU in code", `export default function () { if (__VU === 1) { login(); } }`, []string{"__VU"}},
		{"__ITER in code", "export default function () { const id = __ITER % 10; }", []string{"__ITER"}},
		{"both, in a template literal", "http.post(`${base}/x`, JSON.stringify({ name: `item-${__VU}-${__ITER}` }))", []string{"__VU", "__ITER"}},
		{"nested template", "const s = `a${ `b${__ITER}` }c`;", []string{"__ITER"}},
		{"after a URL in a string", `http.get('http://host/a'); const v = __VU;`, []string{"__VU"}},
		{"after a URL in a template", "http.get(`http://${host}/a`); const v = __VU;", []string{"__VU"}},
		{"line comment", "// uses __VU to pick a user\nexport default function () {}", nil},
		{"block comment", "/* __ITER\n __VU */ export default function () {}", nil},
		{"quoted string", `console.log("__VU is per runner"); console.log('__ITER');`, nil},
		{"property of that name", `const o = {}; o.__VU = 1; const x = o.__ITER;`, nil},
		{"longer identifier", `const __VU_COUNT = 3; const __ITERATIONS = 2;`, nil},
		{"exec API", `import exec from 'k6/execution'; const id = exec.vu.idInTest;`, nil},
		{"unterminated comment", "const a = __VU; /* open", []string{"__VU"}},
	} {
		if diff := cmp.Diff(tc.want, PerRunnerNumbering(tc.script)); diff != "" {
			t.Errorf("%s: PerRunnerNumbering (-want +got):\n%s", tc.name, diff)
		}
	}
}
