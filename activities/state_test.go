package activities

import (
	"testing"
	"time"
)

func TestKeptRenderersExpireAndStayBounded(t *testing.T) {
	t.Parallel()
	a := &Activities{}
	st := a.state()
	r := &alertRenderer{}
	st.keepRenderer(AlertRef{Tenant: "1", AlertID: 1}, r)
	if st.renderer(AlertRef{Tenant: "1", AlertID: 1}) != r {
		t.Fatal("a kept renderer is not found")
	}
	if st.renderer(AlertRef{Tenant: "2", AlertID: 1}) != nil {
		t.Fatal("another tenant's alert found a renderer")
	}
	st.cache[AlertRef{Tenant: "1", AlertID: 1}] = renderContext{renderer: r, loaded: time.Now().Add(-renderTTL)}
	if st.renderer(AlertRef{Tenant: "1", AlertID: 1}) != nil {
		t.Fatal("an expired renderer is still used")
	}
	for i := int64(2); i < 2+3*renderCacheSize; i++ {
		st.keepRenderer(AlertRef{Tenant: "1", AlertID: i}, r)
	}
	if len(st.cache) != renderCacheSize {
		t.Fatalf("%d renderers kept, want at most %d", len(st.cache), renderCacheSize)
	}
	if st.renderer(AlertRef{Tenant: "1", AlertID: 1 + 3*renderCacheSize}) != r {
		t.Fatal("the newest renderer was dropped")
	}
	if other := (&Activities{}).state(); other == st {
		t.Fatal("two Activities share their state")
	}
}
