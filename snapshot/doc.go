// Package snapshot keeps users' state on a durability ladder beyond the
// main store: one JSON document per user in a directory (file:///dir) or
// in S3-compatible object storage (s3://bucket/prefix, package s3), so a
// brand-new process with an empty store knows the user.
//
// # What a snapshot holds
//
// A user's document is the user export of the local store
// (memento.UserExport, format "memento.user/v1": threads with their active
// contexts, messages and summaries, events, memories and pipeline runs)
// with one entry in "sections" per component that keeps more per-user data
// (memento.UserSection: the profile as "profile", and whatever else is
// plugged into Snapshots.Sections). It lives under
//
//	users/<tenant>/<user>.json
//
// with ids escaped (EscapeID). Learned models such as the profile's
// co-occurrence model are objects of their own, under
// models/<tenant>/<name>.bin. The file store writes atomically: a
// temporary file in the same directory, fsync, rename, fsync of the
// directory.
//
// # How data flows
//
//	local store --ChangeSource.ChangedUsers (poll) / Notify--> WriteBehind
//	  --debounce, Snapshots.Push (Document: ExportUser + sections)--> Store.Put
//	request for an unknown user --Restorer.Ensure--> Snapshots.Pull
//	  --Store.Get, ImportUser + sections (rolled back on failure)--> local store
//	`memento snapshot push|pull` --> Snapshots.Push / Pull for one or all users
//
// The write-behind never runs on a request's path. It waits until a user
// has been quiet for Options.Debounce (at most Options.MaxDelay), writes
// only documents that changed, and retries failures with doubling backoff,
// counting them in memento_snapshot_writes_total{result="error"} and
// logging each. The local store stays the source of truth: nothing is lost
// while the snapshot store is down, and the cursor persisted in the local
// store only moves past changes once they are written.
//
// The Restorer restores a user the local store does not know on first
// access, once per user and process; when the snapshot store cannot be
// reached it fails the request (EUNAVAILABLE) rather than let the user
// start empty and have the write-behind overwrite their snapshot.
//
// A user deleted from the local store (DELETE /v1/users/{user}) is deleted
// from the snapshot store by the write-behind as well, so no restart brings
// them back.
//
// A snapshot store is a backup and a way to move users between machines,
// with one active writer per user: two processes that serve the same user
// at once overwrite each other's snapshots (the last write wins). Sharing
// a store between processes is what PostgreSQL is for.
package snapshot
