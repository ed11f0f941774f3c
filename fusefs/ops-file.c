/* Open files: open/create, data (spliced reads, buffer-copy writes), and the
 * close event that carries the per-file byte counts for the audit log.
 * In no-open mode (file-handles.c) OPEN is answered ENOSYS once, the kernel
 * stops sending OPEN, FLUSH and RELEASE, and the data requests come with
 * fh 0: they work on the daemon's handle for the inode instead. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fusefs/journal.h"
#include "fusefs/view-private.h"

static VrFile *file_of(struct fuse_file_info *fi)
{
	return (VrFile *)(uintptr_t)fi->fh;
}

/* The open file of a data request: its fh, or in no-open mode a handle
 * (NULL after replying with a refusal). Given back with file_done. */
static VrFile *file_get(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, bool write)
{
	if (fi && fi->fh)
		return file_of(fi);
	return vr_handle_get(req, vr_inode_get(ino), write);
}

/* Before the reply: once the kernel has it, an fh may be released (and
 * freed) by another thread at any moment. */
static void file_done(VrFile *f)
{
	vr_handle_put(f);
}

/* For a reply that still needs f's fd (spliced data): what to give back
 * after it, taken before it. */
static VrFile *file_handle(VrFile *f)
{
	return f->cached ? f : NULL;
}

static bool wants_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

static VrFile *file_new(int fd, VrInode *inode, fuse_req_t req, bool writable)
{
	VrFile *f = g_new0(VrFile, 1);
	f->fd = fd;
	f->inode = inode;
	f->pid = fuse_req_ctx(req)->pid;
	f->writable = writable;
	pthread_mutex_lock(&vr_view->files_lock);
	g_hash_table_add(vr_view->open_files, f);
	pthread_mutex_unlock(&vr_view->files_lock);
	return f;
}

static void file_free(VrFile *f)
{
	pthread_mutex_lock(&vr_view->files_lock);
	g_hash_table_remove(vr_view->open_files, f);
	pthread_mutex_unlock(&vr_view->files_lock);
	close(f->fd);
	g_free(f->redacted);
	g_free(f);
}

static void log_close(VrFile *f)
{
	uint64_t nr = atomic_load(&f->bytes_read), nw = atomic_load(&f->bytes_written);
	VrAuditLevel level = nw > 0 ? VR_AUDIT_WRITES : VR_AUDIT_OPENS;
	if (!vr_audit_wants(level))
		return;
	g_autofree char *rel = vr_inode_relpath(f->inode);
	VrAuditEvent ev = {
		.op = "close", .path = rel, .result = f->redacted ? "redacted" : "ok",
		.pid = f->pid, .bytes_read = (int64_t)nr, .bytes_written = (int64_t)nw,
	};
	vr_audit_emit(level, &ev);
}

void vr_files_init(VrView *v)
{
	pthread_mutex_init(&v->files_lock, NULL);
	v->open_files = g_hash_table_new(NULL, NULL);
	v->read_seen = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
	                                     (GDestroyNotify)g_bytes_unref, NULL);
}

void vr_files_close_all(VrView *v)
{
	vr_handles_close_all();
	vr_dirs_close_all();
	if (!v->open_files)
		return;
	GList *left = g_hash_table_get_keys(v->open_files);
	for (GList *l = left; l; l = l->next) {
		log_close(l->data);
		file_free(l->data);
	}
	g_list_free(left);
	g_clear_pointer(&v->open_files, g_hash_table_unref);
	g_clear_pointer(&v->read_seen, g_hash_table_unref);
}

static void vr_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (vr_view->no_open) {
		/* The kernel remembers this for the mount: no more OPEN (nor
		 * FLUSH and RELEASE) for files; see file-handles.c. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	VrInode *inode = vr_inode_get(ino);
	VrDecision d = vr_inode_decision(inode);
	g_autofree char *rel = vr_inode_relpath(inode);
	bool wr = wants_write(fi->flags);

	if (d.cls == VR_CLASS_HIDE) {
		vr_refuse(req, "open", rel, d, ENOENT);
		return;
	}
	if (!S_ISREG(inode->type)) {
		/* The kernel handles fifos itself and follows symlinks in the
		 * caller's namespace; anything else here is not for us. */
		fuse_reply_err(req, S_ISLNK(inode->type) ? ELOOP : EACCES);
		return;
	}
	if (wr && d.cls != VR_CLASS_VISIBLE) {
		vr_refuse(req, "open", rel, d, EACCES);
		return;
	}
	/* The class was decided for rel: the kernel's entry may predate a
	 * rename on the host (to a hidden name, say). ESTALE makes it look
	 * the path up again and retry. */
	if (!vr_inode_still_named(inode)) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	/* Decided before the open itself: an O_TRUNC must not reach a file
	 * found to hold a secret (an editor would save the mask over it). */
	bool masked = false;
	if (vr_content_scan_applies(inode, d) &&
	    vr_content_scan_check(req, inode, rel) == VR_SCAN_HIT) {
		if (wr || vr_view->opts->scan_mode == VR_VIEW_SCAN_REFUSE) {
			vr_content_scan_refuse(req, "open", rel);
			return;
		}
		masked = true;
	}

	char proc[64];
	vr_proc_path(proc, inode->fd);
	if (wr)
		vr_journal_before_modify(inode);
	int flags = (fi->flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_NOCTTY)) | O_CLOEXEC;
	int fd = open(proc, flags);
	for (int tries = 0; fd < 0 && vr_evict_retry(errno, &tries);)
		fd = open(proc, flags);
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	VrFile *f = file_new(fd, inode, req, wr);
	int kr = vr_keyfile_attach(req, f); /* a key file: its masked image */
	if (kr < 0) {
		file_free(f);
		fuse_reply_err(req, -kr);
		return;
	}
	if (!f->keyfile && (d.cls == VR_CLASS_REDACT || masked)) {
		int r = masked ? vr_content_scan_load_masked(fd, rel, &f->redacted, &f->redacted_len)
		               : vr_redact_load(fd, &f->redacted, &f->redacted_len);
		if (r < 0) {
			file_free(f);
			vr_refuse(req, "open", rel, d, -r);
			return;
		}
	}
	/* keep_cache: the page cache survives reopening; auto_inval_data
	 * drops it when the host changes mtime/size. Not for redacted files:
	 * a hard link seen earlier under a visible name may have cached the
	 * clear text. */
	fi->keep_cache = !f->redacted;
	/* No FLUSH round trip at each close(2) of a read-only open: the view
	 * serves no POSIX locks (the kernel keeps them), so there is nothing
	 * for the host to release; the close event goes out at RELEASE. */
	fi->noflush = !wr;
	fi->fh = (uintptr_t)f;
	vr_audit_req(req, wr ? VR_AUDIT_WRITES : VR_AUDIT_OPENS, "open", rel,
	             f->redacted ? "redacted" : "ok", d.rule, NULL);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* The opener was interrupted; nobody will release this. */
		file_free(f);
	}
}

static void vr_ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                         struct fuse_file_info *fi)
{
	VrInode *p = vr_inode_get(parent);
	g_autofree char *rel = NULL;
	/* Decided before openat: O_CREAT|O_TRUNC of a hidden name must not
	 * reach the host file of that name. */
	if (!vr_new_name_allowed(req, "create", p, name, S_IFREG, &rel))
		return;
	VR_CREATING(p);
	vr_journal_before_create(p, name, rel);
	int flags = (fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC) & ~O_NOCTTY;
	mode = vr_new_mode(req, p, mode);
	/* O_EXCL first, so that we know whether this made the file (no-open
	 * mode: its fd is then the first write handle); an existing file
	 * without O_EXCL asked for is opened as the caller asked. */
	int fd = openat(p->fd, name, flags | O_EXCL, mode);
	bool made_here = fd >= 0;
	if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL))
		fd = openat(p->fd, name, flags, mode);
	if (fd < 0) {
		int err = errno;
		vr_audit_req(req, VR_AUDIT_WRITES, "create", rel, vr_errno_name(err), NULL, NULL);
		fuse_reply_err(req, err);
		return;
	}
	vr_ids_give_fd(req, p, fd);
	if (made_here)
		vr_keyfile_created(p->fd, name, rel); /* at a key path: a key file again */
	struct fuse_entry_param e;
	int r = vr_do_lookup(req, parent, name, &e, NULL);
	if (r < 0) {
		close(fd);
		fuse_reply_err(req, -r);
		return;
	}
	vr_audit_req(req, VR_AUDIT_WRITES, "create", rel, "ok", NULL, NULL);
	if (vr_view->no_open) {
		/* Once no-open mode is on the kernel never releases what
		 * CREATE opens: no fh. Its reads and writes get handles like
		 * any file's; a mode that would refuse the creator a new fd
		 * (git makes its objects 0444 and then writes them) keeps this
		 * one on the inode, as the creator's open does on the host. */
		/* The close below is an event of the view's own (host-watch.c). */
		VrInode *made = vr_inode_get(e.ino);
		vr_change_begin(made);
		if (made_here)
			vr_handle_adopt_created(req, made, fd, flags);
		vr_handle_keep_create_fd(made, fd, mode, fi->flags);
		vr_change_end(made, true);
		fi->fh = 0;
		fi->keep_cache = 1;
		fi->noflush = 1;
		fuse_reply_create(req, &e, fi);
		return;
	}
	VrFile *f = file_new(fd, vr_inode_get(e.ino), req, true);
	/* A key file (made here at a key path, or one that was there after
	 * all): its masked image, as an open gets. */
	int kr = vr_keyfile_attach(req, f);
	if (kr < 0) {
		vr_inode_forget(f->inode, 1); /* the entry the kernel will not get */
		file_free(f);
		fuse_reply_err(req, -kr);
		return;
	}
	fi->fh = (uintptr_t)f;
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		file_free(f);
}

/* "reads" level: the first read of each file in the run, whatever name or
 * inode lifetime it was read through. */
static void note_first_read(fuse_req_t req, VrFile *f)
{
	if (atomic_load(&f->inode->read_logged) || atomic_exchange(&f->inode->read_logged, true))
		return;
	if (!vr_audit_wants(VR_AUDIT_READS))
		return;
	struct { dev_t dev; ino_t ino; } key = {f->inode->dev, f->inode->ino};
	GBytes *k = g_bytes_new(&key, sizeof key);
	pthread_mutex_lock(&vr_view->files_lock);
	bool first = g_hash_table_add(vr_view->read_seen, k);
	pthread_mutex_unlock(&vr_view->files_lock);
	if (!first)
		return;
	g_autofree char *rel = vr_inode_relpath(f->inode);
	VrDecision d = vr_inode_decision(f->inode);
	vr_audit_req(req, VR_AUDIT_READS, "read", rel, f->redacted ? "redacted" : "ok", d.rule, NULL);
}

static void vr_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
	VrFile *f = file_get(req, ino, fi, false);
	if (!f)
		return;
	note_first_read(req, f);
	if (f->redacted) {
		size_t n = (size_t)off >= f->redacted_len ? 0 : MIN(size, f->redacted_len - (size_t)off);
		atomic_fetch_add(&f->bytes_read, n);
		/* From a copy: once the kernel has the reply, the agent's close
		 * may release f (another thread frees f->redacted) while this
		 * one is still returning from writev, where ASan checks the
		 * buffer after the call and would report a use after free. */
		g_autofree char *copy = n ? g_memdup2(f->redacted + off, n) : NULL;
		file_done(f);
		fuse_reply_buf(req, copy, n);
		return;
	}
	/* Spliced: the data goes from the host file to /dev/fuse without
	 * passing through this process. The byte count is what was asked for,
	 * clamped at the size the file has now. */
	struct stat st;
	if (fstat(f->fd, &st) == 0 && off < st.st_size)
		atomic_fetch_add(&f->bytes_read, MIN((off_t)size, st.st_size - off));
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = f->fd;
	buf.buf[0].pos = off;
	VrFile *handle = file_handle(f);
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
	vr_handle_put(handle);
}

static void vr_ll_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off,
                            struct fuse_file_info *fi)
{
	VrFile *f = file_get(req, ino, fi, true);
	if (!f) {
		/* Refused: the kernel may hold the bytes in its pages (a shared
		 * mmap's writeback), which the host does not have. */
		vr_inval_pages(vr_inode_get(ino));
		return;
	}
	if (f->keyfile && f->writable) {
		ssize_t kr = vr_keyfile_write(f, in_buf, off);
		if (kr < 0)
			vr_inval_pages(f->inode);
		file_done(f);
		kr < 0 ? fuse_reply_err(req, (int)-kr) : fuse_reply_write(req, (size_t)kr);
		return;
	}
	if (!f->writable || f->redacted) {
		vr_inval_pages(f->inode);
		file_done(f);
		fuse_reply_err(req, EBADF);
		return;
	}
	if (vr_git_is_gitfile(f->inode)) {
		/* Checked before it reaches the host (gitnames.c). */
		ssize_t r = vr_git_write(req, f, in_buf, off);
		if (r < 0)
			vr_inval_pages(f->inode); /* as any refused write */
		file_done(f);
		if (r < 0)
			fuse_reply_err(req, (int)-r);
		else
			fuse_reply_write(req, (size_t)r);
		return;
	}
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in_buf));
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = f->fd;
	out.buf[0].pos = off;
	vr_change_begin(f->inode);
	ssize_t res = fuse_buf_copy(&out, in_buf, 0);
	vr_change_end(f->inode, res > 0);
	if (res >= 0) {
		atomic_fetch_add(&f->bytes_written, (uint64_t)res);
		vr_handle_wrote(req, f);
	} else {
		vr_inval_pages(f->inode); /* ENOSPC, EDQUOT…: as a refusal */
	}
	file_done(f);
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

static void vr_ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (!fi->fh) {
		/* No-open mode: nothing to flush, and ENOSYS stops the kernel
		 * asking at every close(2). */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	/* close(dup()) so the host file system sees a close per close(2)
	 * (NFS-style close-to-open, POSIX lock release), as passthrough_ll. */
	int err = close(dup(file_of(fi)->fd)) < 0 ? errno : 0;
	fuse_reply_err(req, err);
}

static void vr_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (!fi->fh) {
		fuse_reply_err(req, 0); /* not sent in no-open mode; harmless */
		return;
	}
	VrFile *f = file_of(fi);
	log_close(f);
	file_free(f);
	fuse_reply_err(req, 0);
}

static void vr_ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	if (!fi || !fi->fh) {
		/* Syncing changes nothing: a read-only fd of our own will do. */
		fuse_reply_err(req, -vr_inode_sync(vr_inode_get(ino), datasync));
		return;
	}
	int fd = file_of(fi)->fd;
	int err = (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0;
	fuse_reply_err(req, err);
}

static void vr_ll_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                            struct fuse_file_info *fi)
{
	VrFile *f = file_get(req, ino, fi, true);
	if (!f)
		return;
	vr_change_begin(f->inode);
	int err = !f->writable || f->redacted ? EBADF
	          : vr_git_is_gitfile(f->inode) ? EACCES /* holes would be NULs no check saw */
	          : fallocate(f->fd, mode, off, len) < 0 ? errno : 0;
	vr_change_end(f->inode, err == 0);
	if (err == 0)
		vr_handle_wrote(req, f);
	file_done(f);
	fuse_reply_err(req, err);
}

static void vr_ll_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
                                  struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
                                  struct fuse_file_info *fi_out, size_t len, int flags)
{
	VrFile *in = file_get(req, ino_in, fi_in, false);
	if (!in)
		return;
	VrFile *out = file_get(req, ino_out, fi_out, true);
	if (!out) {
		file_done(in);
		return;
	}
	ssize_t res = 0;
	int err = 0;
	if (in->redacted || out->keyfile || vr_git_is_gitfile(out->inode)) {
		/* The host copy would carry the clear text (or bytes the .git
		 * gate has not seen): make the kernel fall back to reading and
		 * writing through the view. */
		err = EXDEV;
	} else if (!out->writable || out->redacted) {
		err = EBADF;
	} else {
		note_first_read(req, in);
		vr_change_begin(out->inode);
		res = copy_file_range(in->fd, &off_in, out->fd, &off_out, len, (unsigned)flags);
		vr_change_end(out->inode, res > 0);
		if (res < 0) {
			err = errno;
		} else {
			atomic_fetch_add(&in->bytes_read, (uint64_t)res);
			atomic_fetch_add(&out->bytes_written, (uint64_t)res);
			vr_handle_wrote(req, out);
		}
	}
	file_done(in);
	file_done(out);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, (size_t)res);
}

static void vr_ll_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
                        struct fuse_file_info *fi)
{
	VrFile *f = file_get(req, ino, fi, false);
	if (!f)
		return;
	if (f->redacted && (whence == SEEK_DATA || whence == SEEK_HOLE)) {
		/* The masked copy is all data, no holes. */
		off_t len = (off_t)f->redacted_len;
		file_done(f);
		if (off >= len)
			fuse_reply_err(req, ENXIO);
		else
			fuse_reply_lseek(req, whence == SEEK_DATA ? off : len);
		return;
	}
	off_t r = lseek(f->fd, off, whence);
	if (r < 0)
		r = -errno;
	file_done(f);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_lseek(req, r);
}

void vr_ops_file(struct fuse_lowlevel_ops *ops)
{
	ops->open = vr_ll_open;
	ops->create = vr_ll_create;
	ops->read = vr_ll_read;
	ops->write_buf = vr_ll_write_buf;
	ops->flush = vr_ll_flush;
	ops->release = vr_ll_release;
	ops->fsync = vr_ll_fsync;
	ops->fallocate = vr_ll_fallocate;
	ops->copy_file_range = vr_ll_copy_file_range;
	ops->lseek = vr_ll_lseek;
}
