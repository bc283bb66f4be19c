package aggregates

import "context"

// Phaser hears which phase the work after an ingest's reading has moved
// to (the catalog, the saved overlap, steps and fuse-pattern rows): work a
// byte count does not show, so a progress display can name it instead of
// sitting at 100% through a long Finish. The finish's steps take no
// Options, so it rides on the context: WithPhaser. Without one, nothing
// is reported. It lives here, not in ingest, because only the finish has
// phases a byte count does not show.
type Phaser interface {
	Phase(name string)
}

// Phases FinishPerRun, SaveFusion and SaveOverlapRows report, in this
// order.
const (
	PhaseCatalog = "installing the catalog"
	PhaseOverlap = "saving overlap"
	PhaseSteps   = "saving step aggregates"
	PhaseFusion  = "saving fuse-pattern rows"
	// PhaseOverlapRows is SaveOverlapRows (Finish, after SaveFusion).
	PhaseOverlapRows = "saving overlap rows"
	// PhaseSaving is Finish's one name for the saves it runs side
	// by side (Announce).
	PhaseSaving = "saving overlap, steps, fuse-pattern and overlap rows"
)

type phaserKey struct{}

// WithPhaser returns ctx carrying p for Finish and SaveFusion.
func WithPhaser(ctx context.Context, p Phaser) context.Context {
	return context.WithValue(ctx, phaserKey{}, p)
}

// Announce tells ctx's Phaser, if any, that name begins, and returns ctx
// without it: work that runs side by side under that one name would
// otherwise show its parts' names in turn, each as if it ran alone.
func Announce(ctx context.Context, name string) context.Context {
	phase(ctx, name)
	return WithPhaser(ctx, nil)
}

// phase tells ctx's Phaser, if any, that name begins.
func phase(ctx context.Context, name string) {
	if p, ok := ctx.Value(phaserKey{}).(Phaser); ok {
		p.Phase(name)
	}
}
