package tracer

// Strings interns names. ID 0 is always "". Not safe for concurrent use.
type Strings struct {
	list []string
	ids  map[string]StrID
}

// NewStrings returns a table holding only "".
func NewStrings() *Strings {
	return &Strings{list: []string{""}, ids: map[string]StrID{"": 0}}
}

// Intern returns s's ID, adding it if new. It copies nothing: callers that
// pass a string aliasing a reused buffer must pass a copy.
func (t *Strings) Intern(s string) StrID {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := StrID(len(t.list))
	t.list = append(t.list, s)
	t.ids[s] = id
	return id
}

// InternBytes is Intern for a byte slice; it allocates only for a new name.
func (t *Strings) InternBytes(b []byte) StrID {
	if id, ok := t.ids[string(b)]; ok { // no allocation: compiler optimisation
		return id
	}
	return t.Intern(string(b))
}

// Lookup returns the ID of s and whether it is present.
func (t *Strings) Lookup(s string) (StrID, bool) {
	id, ok := t.ids[s]
	return id, ok
}

// Get returns the string for id ("" when out of range).
func (t *Strings) Get(id StrID) string {
	if int(id) < len(t.list) {
		return t.list[id]
	}
	return ""
}

// Len returns the number of strings, "" included.
func (t *Strings) Len() int { return len(t.list) }
