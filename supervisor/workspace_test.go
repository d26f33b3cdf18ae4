package supervisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

// workspaceTree makes ws/sub, ws/in -> ws/sub, ws/out -> a sibling of ws,
// and that sibling, all resolved (t.TempDir may itself lie under a link).
func workspaceTree(t *testing.T) (ws, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside = filepath.Join(root, "ws"), filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "in")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
	require.NoError(t, os.Symlink("../../outside", filepath.Join(ws, "sub", "relout")))
	return ws, outside
}

func TestWorkspaceAccepts(t *testing.T) {
	ws, _ := workspaceTree(t)
	rows := []struct{ name, cwd, want string }{
		{"no cwd: the workspace itself", "", ws},
		{"the workspace itself", ws, ws},
		{"a subdirectory", filepath.Join(ws, "sub"), filepath.Join(ws, "sub")},
		{"a link that stays inside, reported as given", filepath.Join(ws, "in"), filepath.Join(ws, "in")},
		{"dot-dot that stays inside", filepath.Join(ws, "sub", ".."), ws},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			cfg, err := Args{Workspace: ws, Cwd: row.cwd, Command: []string{"true"}}.Validate()
			require.NoError(t, err)
			assert.Equal(t, row.want, cfg.Cwd)
			assert.Equal(t, ws, cfg.Workspace)
		})
	}
}

// A workspace named through a link is resolved: a cwd in the real
// directory is inside it.
func TestWorkspaceGivenThroughALink(t *testing.T) {
	ws, _ := workspaceTree(t)
	link := filepath.Join(filepath.Dir(ws), "wslink")
	require.NoError(t, os.Symlink(ws, link))
	cfg, err := Args{Workspace: link, Cwd: filepath.Join(ws, "sub"), Command: []string{"true"}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, ws, cfg.Workspace)
	cfg, err = Args{Workspace: link, Command: []string{"true"}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, link, cfg.Cwd, "the default cwd is the workspace as given")
}

func TestWorkspaceRefuses(t *testing.T) {
	ws, outside := workspaceTree(t)
	file := filepath.Join(ws, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	rows := []struct {
		name, workspace, cwd string
		msg                  []string
	}{
		{"dot-dot escape", ws, filepath.Join(ws, "sub", "..", ".."),
			[]string{`cwd "` + filepath.Dir(ws) + `" resolves to`, `outside workspace "` + ws + `"`}},
		{"a sibling", ws, outside, []string{`cwd "` + outside + `"`, `outside workspace "` + ws + `"`}},
		{"a link out", ws, filepath.Join(ws, "out"),
			[]string{`cwd "` + filepath.Join(ws, "out") + `" resolves to "` + outside + `"`, `outside workspace "` + ws + `"`}},
		{"a relative link out", ws, filepath.Join(ws, "sub", "relout"),
			[]string{`resolves to "` + outside + `"`, `outside workspace`}},
		{"a name sharing the prefix", filepath.Join(ws, "su"), filepath.Join(ws, "sub"), []string{`workspace "` + filepath.Join(ws, "su") + `" does not exist`}},
		{"a missing workspace", filepath.Join(ws, "missing"), "", []string{`workspace "` + filepath.Join(ws, "missing") + `" does not exist`}},
		{"a file as workspace", file, "", []string{`workspace "` + file + `" is not a directory`}},
		{"a NUL byte", "a\x00b", "", []string{`workspace "a\x00b" must be a valid UTF-8 path`}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			_, err := Args{Workspace: row.workspace, Cwd: row.cwd, Command: []string{"true"}}.Validate()
			var ve *request.ValidationError
			require.ErrorAs(t, err, &ve)
			for _, m := range row.msg {
				assert.Contains(t, ve.Msg, m)
			}
		})
	}
}

// A directory whose name merely starts with the workspace's is outside it.
func TestWorkspacePrefixIsNotContainment(t *testing.T) {
	ws, _ := workspaceTree(t)
	twin := ws + "2"
	require.NoError(t, os.Mkdir(twin, 0o755))
	_, err := Args{Workspace: ws, Cwd: twin, Command: []string{"true"}}.Validate()
	var ve *request.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.Msg, `outside workspace "`+ws+`"`)
}
