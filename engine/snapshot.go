package engine

import (
	"context"

	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/snapshot"
)

// Snapshots copies the engine's users to and from a snapshot store.
func (e *Engine) Snapshots(st snapshot.Store) *snapshot.Snapshots {
	return &snapshot.Snapshots{
		Store: st, Local: e.Store, Models: e.Store, Sections: e.UserSections(), Logger: e.Logger,
		CheckModel: func(name string, data []byte) error {
			if name != profile.ModelName {
				return nil
			}
			_, err := profile.DecodeModel(data)
			return err
		},
	}
}

// Snapshotting is the snapshot copy of a serving engine: the write-behind
// that copies each changed user out once they are quiet, and the restorer
// that brings an unknown user back on first access.
type Snapshotting struct {
	WriteBehind *snapshot.WriteBehind
	Restorer    *snapshot.Restorer
}

// StartSnapshots restores the learned models the local store lacks from
// st, starts the write-behind (stopped by Close) and returns it with the
// restorer. The tenant's co-occurrence model that cannot be restored is
// logged, not fatal: the workers learn it again.
func (e *Engine) StartSnapshots(ctx context.Context, st snapshot.Store, opts snapshot.Options) (*Snapshotting, error) {
	snap := e.Snapshots(st)
	if _, err := snap.PullModel(ctx, e.Config.Tenant, profile.ModelName, profile.RestoredMark, true); err != nil {
		e.Logger.Warn("the co-occurrence model could not be restored from the snapshot store", "err", err)
	}
	metrics := snapshot.NewMetrics(e.Registry)
	wb := &snapshot.WriteBehind{Snapshots: snap, Changes: e.Store, ModelNames: []string{profile.ModelName}, Metrics: metrics, Logger: e.Logger, Options: opts}
	if err := wb.Start(ctx); err != nil {
		return nil, err
	}
	e.OnClose(wb.Close)
	restorer := &snapshot.Restorer{Snapshots: snap, Metrics: metrics, Logger: e.Logger, Restored: wb.MarkWritten}
	e.Logger.Info("snapshots", "store", st.String())
	return &Snapshotting{WriteBehind: wb, Restorer: restorer}, nil
}
