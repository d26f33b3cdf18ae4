package reaper

// AddTier puts t on top of the tiers already in c; its hooks run after
// theirs. Call it before the cleanup, once the tier's processes exist.
func (c *Containment) AddTier(t Tier) {
	if !c.disabled {
		c.tiers = append(c.tiers, t)
	}
}
