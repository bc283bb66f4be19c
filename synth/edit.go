package synth

import "strings"

// Edit changes the kernels whose name contains Match, so that tests can
// build run pairs with known differences (a kernel slower, added, removed,
// renamed, a fusion switched off). Edits apply in order; the first that
// matches a kernel decides.
type Edit struct {
	// Match is a substring of the kernel name as written in the trace;
	// "" matches every kernel.
	Match string
	// Factor scales the kernel's durations (1.2 = 20% slower); 0 means 1.
	Factor float64
	// Into, when not nil, launches these kernels in the matched one's place,
	// in order, each with its launch configuration, site and (scaled)
	// duration; an empty list removes the kernel; "" stands for the matched
	// kernel's own name. One name renames it; "" and another adds a kernel;
	// two others split a fused kernel into its chain.
	Into []string
}

// applyEdits rewrites the kernels of every leaf under nodes.
func applyEdits(edits []Edit, nodes []*node) {
	if len(edits) == 0 {
		return
	}
	memo := map[*kspec][]*kspec{}
	var walk func(nd *node)
	walk = func(nd *node) {
		if l := nd.leaf; l != nil {
			var ks []*kspec
			for _, k := range l.ks {
				ks = append(ks, editKernel(edits, memo, k)...)
			}
			l.ks = ks
		}
		for _, c := range nd.kids {
			walk(c)
		}
	}
	for _, nd := range nodes {
		walk(nd)
	}
}

func editKernel(edits []Edit, memo map[*kspec][]*kspec, k *kspec) []*kspec {
	if out, ok := memo[k]; ok {
		return out
	}
	out := []*kspec{k}
	for _, e := range edits {
		if !strings.Contains(k.name, e.Match) {
			continue
		}
		scaled := *k
		if e.Factor > 0 {
			scaled.durP = int64(float64(k.durP)*e.Factor + 0.5)
			scaled.durD = int64(float64(k.durD)*e.Factor + 0.5)
		}
		out = []*kspec{&scaled}
		if e.Into != nil {
			out = out[:0]
			for _, name := range e.Into {
				c := scaled
				if name != "" {
					c.name = name
				}
				out = append(out, &c)
			}
		}
		break
	}
	memo[k] = out
	return out
}
