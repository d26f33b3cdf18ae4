package credential

import (
	"os/user"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

// nobody is the host's nobody, from the same files Resolve reads.
func nobody(t *testing.T) *user.User {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("this host has no user nobody")
	}
	return u
}

func TestResolveName(t *testing.T) {
	pw := nobody(t)
	u, err := Resolve("nobody")
	require.NoError(t, err)
	assert.Equal(t, "nobody", u.Name)
	assert.Equal(t, pw.Uid, itoa(u.Uid))
	assert.Equal(t, pw.Gid, itoa(u.Gid))
	ids, err := pw.GroupIds()
	require.NoError(t, err)
	var want []string
	for _, g := range u.Groups {
		want = append(want, itoa(g))
	}
	assert.ElementsMatch(t, ids, want, "initgroups' list: the primary group and each group naming the user")
	assert.Contains(t, want, pw.Gid)
	if pw.HomeDir != "" {
		assert.Equal(t, pw.HomeDir, u.Home)
	}
}

func TestResolveNumericAndGroup(t *testing.T) {
	pw := nobody(t)
	u, err := Resolve(pw.Uid)
	require.NoError(t, err)
	assert.Equal(t, "nobody", u.Name, "a numeric uid with an entry takes its name")

	u, err = Resolve("nobody:0")
	require.NoError(t, err)
	assert.Equal(t, uint32(0), u.Gid)
	assert.Empty(t, u.Groups, "an explicit group: no supplementary groups")
	assert.NotNil(t, u.Groups, "and setgroups(0) clears them, rather than leaving shellsup's")

	u, err = Resolve("4000000:4000001")
	require.NoError(t, err, "a numeric uid without an entry, with a group")
	assert.Equal(t, uint32(4000000), u.Uid)
	assert.Equal(t, "4000000", u.Name)
	assert.Equal(t, NoHome, u.Home)
	assert.Equal(t, "4000001", u.Group)
}

func TestResolveRefusals(t *testing.T) {
	nobody(t)
	for spec, msg := range map[string]string{
		"no-such-user-xyz":        `user "no-such-user-xyz": no user "no-such-user-xyz" in /etc/passwd`,
		"nobody:no-such-group-xy": `user "nobody:no-such-group-xy": no group "no-such-group-xy" in /etc/group`,
		"4000000":                 `user "4000000": uid 4000000 has no entry in /etc/passwd, so it has no group: give one (--user 4000000:GROUP)`,
		"4294967295:0":            `user "4294967295:0": no user "4294967295"`,
		"":                        `user must be USER or USER:GROUP`,
	} {
		_, err := Resolve(spec)
		if assert.Error(t, err, spec) {
			assert.Contains(t, err.Error(), msg)
			assert.IsType(t, &request.ValidationError{}, err)
		}
	}
}

func TestWireRoundTrip(t *testing.T) {
	for _, u := range []*User{{Uid: 65534, Gid: 65534, Groups: []uint32{65534}}, {Uid: 1, Gid: 2, Groups: []uint32{}}, {Uid: 0, Gid: 0, Groups: []uint32{1, 2, 3}}} {
		got, err := FromWire(u.Wire())
		require.NoError(t, err)
		assert.Equal(t, u.Uid, got.Uid)
		assert.Equal(t, u.Gid, got.Gid)
		assert.Equal(t, u.Groups, got.Groups)
	}
	for _, bad := range []string{"", "1:2", "a:2:", "1:2:x", "1:2:3:4"} {
		_, err := FromWire(bad)
		assert.Error(t, err, bad)
	}
}

func TestEnv(t *testing.T) {
	u := &User{Name: "nobody", Home: NoHome}
	got := u.Env([]string{"HOME=/root", "USER=root", "LOGNAME=root", "PATH=/bin", "USERX=1"})
	assert.Equal(t, []string{"PATH=/bin", "USERX=1", "HOME=/nonexistent", "USER=nobody", "LOGNAME=nobody"}, got)
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
