/* The subcommands of vault-run; main.c dispatches to them. Each returns the
 * process exit status (see common/exitcode.h). */
#pragma once

int vr_cmd_run(int argc, char **argv);      /* vault-run [OPTIONS] [--] COMMAND... */
int vr_cmd_mount(int argc, char **argv);    /* vault-run mount PROJECT MOUNTPOINT */
int vr_cmd_policy(int argc, char **argv);   /* vault-run policy explain|show */
int vr_cmd_audit(int argc, char **argv);    /* vault-run audit [LOG|RUN] */
int vr_cmd_scan(int argc, char **argv);     /* vault-run scan PATH... */
int vr_cmd_proxy(int argc, char **argv);    /* vault-run proxy: the network proxy on its own (debugging, tests) */
int vr_cmd_profiles(int argc, char **argv); /* vault-run profiles [NAME] */
int vr_cmd_doctor(int argc, char **argv);   /* vault-run doctor */
int vr_cmd_config(int argc, char **argv);   /* vault-run config init|show */
int vr_cmd_changes(int argc, char **argv);  /* vault-run changes [RUN] [PATH...] */
int vr_cmd_undo(int argc, char **argv);     /* vault-run undo [RUN] [PATH...] */
int vr_cmd_gc(int argc, char **argv);       /* vault-run gc [--older-than DAYS]: prunes undo journals */
