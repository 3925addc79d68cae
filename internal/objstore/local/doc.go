// Package local implements objstore.Store on a local directory, for
// standalone mode.
//
// Path scheme: the object with key "a/b/c" is the regular file
// "<root>/a/b/c"; each key segment is one path element, so the key rules of
// objstore (no "..", no empty segments) keep every object inside root.
//
// Atomic, durable Put: the data is written to a temporary file in the target
// directory (name ".tmp-<base>-<random>"), fsynced, renamed over the final
// name, and the directory is fsynced. Directories created on the way are
// fsynced into their parents. Key segments that start with ".tmp-" are
// reserved for these files and rejected with objstore.ErrInvalidKey; List
// never returns temporary files, so a crash mid-Put leaves at most an
// invisible temporary file behind; RemoveStaleTemp (called by garbage
// collection) deletes those older than a cutoff.
//
// Delete removes the file and then every parent directory that became empty,
// up to but not including root.
package local
