package credential

import (
	"errors"
	"os/user"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/request"
)

// NoHome is HOME for a user whose passwd entry names none (or who has no
// entry), as systemd and su do it.
const NoHome = "/nonexistent"

// User is who bash runs as.
type User struct {
	Spec   string   // as given, e.g. "nobody" or "1000:1000"
	Name   string   // the passwd name, or the uid in decimal when it has no entry
	Uid    uint32   // real, effective and saved
	Gid    uint32   // real, effective and saved
	Group  string   // the group's name, or the gid in decimal when it has no entry
	Groups []uint32 // the supplementary groups; none with an explicit group
	Home   string   // the passwd entry's home, or NoHome
}

// Resolve turns a --user value into a User: USER is a name of
// /etc/passwd or a numeric uid, GROUP a name of /etc/group or a numeric
// gid. Without GROUP, the passwd entry gives the group and /etc/group the
// supplementary groups (initgroups); with it, there are no supplementary
// groups. A numeric uid without a passwd entry needs GROUP. The error is a
// *request.ValidationError quoting spec.
func Resolve(spec string) (*User, error) {
	if err := request.ValidateUser(spec); err != nil {
		return nil, err
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	u, err := lookupUser(spec, name, hasGroup)
	if err != nil {
		return nil, err
	}
	if hasGroup {
		if u.Gid, u.Group, err = lookupGroup(spec, group); err != nil {
			return nil, err
		}
		u.Groups = []uint32{}
	}
	return u, nil
}

// lookupUser finds name in /etc/passwd, by name or by uid; with the
// groups of initgroups unless the caller gives the group.
func lookupUser(spec, name string, hasGroup bool) (*User, error) {
	id, numeric := parseID(name)
	var (
		pw  *user.User
		err error
	)
	if numeric {
		pw, err = user.LookupId(name)
	} else {
		pw, err = user.Lookup(name)
	}
	var unknownID user.UnknownUserIdError
	switch {
	case numeric && errors.As(err, &unknownID) && hasGroup:
		return &User{Spec: spec, Name: name, Uid: id, Home: NoHome}, nil
	case numeric && errors.As(err, &unknownID):
		return nil, request.Invalidf("user %q: uid %s has no entry in /etc/passwd, so it has no group: give one (--user %s:GROUP)", spec, name, name)
	case err != nil && !numeric:
		return nil, request.Invalidf("user %q: no user %q in /etc/passwd (%s)", spec, name, request.UserForm)
	case err != nil:
		return nil, request.Invalidf("user %q: looking up uid %s: %v", spec, name, err)
	}
	u := &User{Spec: spec, Name: pw.Username, Home: pw.HomeDir}
	if u.Home == "" {
		u.Home = NoHome
	}
	var ok bool
	if u.Uid, ok = parseID(pw.Uid); !ok {
		return nil, request.Invalidf("user %q: /etc/passwd gives uid %q, not a number", spec, pw.Uid)
	}
	if u.Gid, ok = parseID(pw.Gid); !ok {
		return nil, request.Invalidf("user %q: /etc/passwd gives gid %q, not a number", spec, pw.Gid)
	}
	if g, err := user.LookupGroupId(pw.Gid); err == nil {
		u.Group = g.Name
	} else {
		u.Group = pw.Gid
	}
	if !hasGroup {
		if u.Groups, err = groupsOf(spec, pw); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// groupsOf is initgroups' list: the primary group and every group of
// /etc/group that lists the user.
func groupsOf(spec string, pw *user.User) ([]uint32, error) {
	ids, err := pw.GroupIds()
	if err != nil {
		return nil, request.Invalidf("user %q: reading the groups of %s from /etc/group: %v", spec, pw.Username, err)
	}
	out := make([]uint32, 0, len(ids))
	for _, s := range ids {
		if id, ok := parseID(s); ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// lookupGroup finds a group by name, or takes a numeric gid as it is.
func lookupGroup(spec, group string) (uint32, string, error) {
	if id, ok := parseID(group); ok {
		if g, err := user.LookupGroupId(group); err == nil {
			return id, g.Name, nil
		}
		return id, group, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, "", request.Invalidf("user %q: no group %q in /etc/group (%s)", spec, group, request.UserForm)
	}
	id, ok := parseID(g.Gid)
	if !ok {
		return 0, "", request.Invalidf("user %q: /etc/group gives gid %q, not a number", spec, g.Gid)
	}
	return id, g.Name, nil
}

// parseID reads a uid or gid: decimal, below 2^32-1 ((uid_t)-1 means "no
// change" to the kernel).
func parseID(s string) (uint32, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == 1<<32-1 {
		return 0, false
	}
	return uint32(v), true
}

// Env sets HOME, USER and LOGNAME in env to the user's, as su and
// systemd-run --uid do; every other variable is left as it is.
func (u *User) Env(env []string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "USER=") && !strings.HasPrefix(kv, "LOGNAME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+u.Home, "USER="+u.Name, "LOGNAME="+u.Name)
}

// Wire is the user as the PID-namespace init takes it on its command line:
// "UID:GID:G1,G2,...".
func (u *User) Wire() string {
	groups := make([]string, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = strconv.FormatUint(uint64(g), 10)
	}
	return strconv.FormatUint(uint64(u.Uid), 10) + ":" + strconv.FormatUint(uint64(u.Gid), 10) + ":" + strings.Join(groups, ",")
}

// FromWire reads what Wire wrote; only the ids are filled in.
func FromWire(s string) (*User, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, errors.New("credential: malformed wire form " + strconv.Quote(s))
	}
	u := &User{Spec: s, Groups: []uint32{}}
	var ok1, ok2 bool
	u.Uid, ok1 = parseID(parts[0])
	u.Gid, ok2 = parseID(parts[1])
	if !ok1 || !ok2 {
		return nil, errors.New("credential: malformed wire form " + strconv.Quote(s))
	}
	if parts[2] != "" {
		for _, g := range strings.Split(parts[2], ",") {
			id, ok := parseID(g)
			if !ok {
				return nil, errors.New("credential: malformed wire form " + strconv.Quote(s))
			}
			u.Groups = append(u.Groups, id)
		}
	}
	return u, nil
}
