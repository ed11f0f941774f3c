/* fusefs/ internals: the per-run change journal (see docs/undo.md).
 *
 * Before the view lets a run destroy something it keeps the original in the
 * journal directory (outside the project and the sandbox):
 *
 *     <dir>/manifest.jsonl   one JSON record per change, in the order made
 *     <dir>/objects/<n>      saved file contents
 *
 * Each hook is called by an op *before* it touches the host, once; when the
 * journal is off (no directory) every hook returns at once. Hooks never fail
 * the op: a file that cannot be kept (over the size cap, unreadable) gets a
 * "skipped" record and an audit event instead. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fusefs/view-private.h"

#define VR_JOURNAL_DEFAULT_MAX ((uint64_t)1 << 30)

/* Takes over nothing: dir_fd and root_fd are duplicated. max_size 0: the
 * default cap. -errno (logged) when the directory cannot be set up. */
int vr_journal_start(int dir_fd, uint64_t max_size, int root_fd, const char *project,
                     const char *run_id);
/* Appends the state every touched path was left in ("final" records: undo
 * compares against them to notice host edits made after the run), closes. */
void vr_journal_stop(void);
/* The manifest's last fsync, begun by vr_journal_stop, is over. */
void vr_journal_wait(void);

/* A regular file is about to be modified in place (write open, O_TRUNC,
 * truncate): its first modification in the run saves its content. */
void vr_journal_before_modify(VrInode *inode);
/* setattr: a size change saves the content, a mode change the old mode. */
void vr_journal_before_setattr(VrInode *inode, int valid);
/* A name is about to be made under parent (create, mkdir, mknod, symlink,
 * link). An existing regular file of that name (create without O_EXCL)
 * counts as a modification. */
void vr_journal_before_create(VrInode *parent, const char *name, const char *rel);
/* unlink/rmdir: a file is linked into the journal (copied across file
 * systems; a link is replaced by a copy before anything writes its inode,
 * and a file changed in the run refers to its kept original instead), a
 * symlink's target and a directory's mode are recorded. */
void vr_journal_before_remove(VrInode *parent, const char *name, const char *rel);
/* rename: what the destination name held is kept as removed, then the move
 * (or exchange) is recorded. */
void vr_journal_before_rename(VrInode *parent, const char *name, const char *srel,
                              VrInode *newparent, const char *newname, const char *drel,
                              unsigned flags);
