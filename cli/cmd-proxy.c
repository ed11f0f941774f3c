/* vault-run proxy: the network proxy of `--net allow=…` in the foreground,
 * for tests and debugging. Prints "http=HOST:PORT socks=HOST:PORT" on stdout
 * once it listens (useful with port 0), then serves until SIGTERM/SIGINT. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "net/allow.h"
#include "net/proxy.h"

static const char usage_text[] =
	"usage: vault-run proxy [--listen HOST:PORT] [--socks-port PORT] --allow PATTERN[,PATTERN...]...\n"
	"                       [--allow-private] [--allow-localhost PORT[/http|/tcp],...]\n"
	"                       [--audit FILE|-] [--netns PATH]\n"
	"  --listen HOST:PORT  HTTP/CONNECT proxy address (default 127.0.0.1:3128; port 0: any)\n"
	"  --socks-port PORT   SOCKS5 port on the same host (default: HTTP port + 1, or any if 0)\n"
	"  --allow PATTERNS    host, *.domain, host:port, IP literal; repeatable (default: deny all)\n"
	"  --allow-private     allow names resolving to loopback/private/link-local addresses\n"
	"  --allow-localhost PORTS  bridge 127.0.0.1:PORT inside --netns to this netns's\n"
	"                      127.0.0.1:PORT (model servers: inference paths only)\n"
	"  --audit FILE|-      write one JSON line per connection (- is stderr)\n"
	"  --netns PATH        listen inside that network namespace (e.g. /proc/PID/ns/net)\n";

/* What the command line said, as text until checked. */
typedef struct {
	char *listen, *socks_port, *audit, *netns;
	char **allow, **localhost;
	gboolean allow_private;
} ProxyArgs;

static void proxy_args_clear(ProxyArgs *a)
{
	g_free(a->listen);
	g_free(a->socks_port);
	g_free(a->audit);
	g_free(a->netns);
	g_strfreev(a->allow);
	g_strfreev(a->localhost);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ProxyArgs, proxy_args_clear)

static gboolean parse_args(ProxyArgs *a, int *argc, char ***argv, int *ret_status)
{
	const GOptionEntry entries[] = {
		{"listen", 0, 0, G_OPTION_ARG_STRING, &a->listen, NULL, NULL},
		{"socks-port", 0, 0, G_OPTION_ARG_STRING, &a->socks_port, NULL, NULL},
		{"allow", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->allow, NULL, NULL},
		{"allow-private", 0, 0, G_OPTION_ARG_NONE, &a->allow_private, NULL, NULL},
		{"allow-localhost", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->localhost, NULL, NULL},
		{"audit", 0, 0, G_OPTION_ARG_FILENAME, &a->audit, NULL, NULL},
		{"netns", 0, 0, G_OPTION_ARG_FILENAME, &a->netns, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"proxy", entries, TRUE, NULL};
	if (!vr_cli_options_parse(&o, usage_text, argc, argv, ret_status))
		return FALSE;
	if (*argc > 1) {
		vr_error("proxy takes no operands (got '%s'; see vault-run proxy --help)", (*argv)[1]);
		*ret_status = VR_EXIT_ERROR;
		return FALSE;
	}
	return TRUE;
}

static gboolean parse_port(const char *s, guint64 *ret)
{
	return *s && g_ascii_string_to_unsigned(s, 10, 0, 65535, ret, NULL);
}

/* --listen HOST:PORT, HOST maybe a bracketed IPv6 literal. */
static gboolean parse_listen(const char *arg, char **ret_host, guint64 *ret_port)
{
	const char *colon = strrchr(arg, ':');
	if (!colon || !parse_port(colon + 1, ret_port)) {
		vr_error("--listen: expected HOST:PORT, got '%s'", arg);
		return FALSE;
	}
	g_free(*ret_host);
	*ret_host = g_strndup(arg, (gsize)(colon - arg));
	char *host = *ret_host;
	size_t n = strlen(host);
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		*ret_host = g_strndup(host + 1, n - 2);
		g_free(host);
	}
	return TRUE;
}

/* --allow PATTERNS and --allow-localhost PORTS into ALLOW. */
static gboolean fill_allow(const ProxyArgs *a, VrNetAllow *allow)
{
	g_autoptr(GError) error = NULL;
	for (char **p = a->allow; p && *p; p++)
		if (!vr_net_allow_add(allow, *p, &error)) {
			vr_error("--allow: %s", error->message);
			return FALSE;
		}
	for (char **p = a->localhost; p && *p; p++) {
		g_autofree char *item = g_strconcat("allow-localhost=", *p, NULL);
		if (!vr_net_allow_add(allow, item, &error)) {
			vr_error("--allow-localhost: %s", error->message);
			return FALSE;
		}
	}
	vr_net_allow_set_private(allow, a->allow_private);
	if (vr_net_allow_bridge_count(allow) && !a->netns) {
		vr_error("--allow-localhost: needs --netns (inside this netns 127.0.0.1:PORT is the server itself)");
		return FALSE;
	}
	return TRUE;
}

/* The listening address: O's host and ports, checked. */
static gboolean fill_listen(const ProxyArgs *a, char **host, VrProxyOptions *o)
{
	guint64 http_port = VR_PROXY_DEFAULT_HTTP_PORT, socks_port = 0;
	if (a->listen && !parse_listen(a->listen, host, &http_port))
		return FALSE;
	if (a->socks_port && !parse_port(a->socks_port, &socks_port)) {
		vr_error("--socks-port: expected a port from 0 to 65535, got '%s'", a->socks_port);
		return FALSE;
	}
	if (!a->socks_port)
		socks_port = http_port == 0 ? 0 : http_port + 1;
	if (socks_port > 65535) {
		vr_error("--listen: no room for the SOCKS port after %" G_GUINT64_FORMAT "; use --socks-port",
		         http_port);
		return FALSE;
	}
	o->listen_host = *host;
	o->http_port = (guint16)http_port;
	o->socks_port = (guint16)socks_port;
	return TRUE;
}

int vr_cmd_proxy(int argc, char **argv)
{
	g_auto(ProxyArgs) a = {0};
	int status;
	if (!parse_args(&a, &argc, &argv, &status))
		return status;
	g_autoptr(VrNetAllow) allow = vr_net_allow_new();
	g_autofree char *host = g_strdup("127.0.0.1");
	VrProxyOptions o;
	vr_proxy_options_init(&o);
	if (!fill_listen(&a, &host, &o) || !fill_allow(&a, allow))
		return VR_EXIT_ERROR;
	if (vr_net_allow_count(allow) == 0 && vr_net_allow_bridge_count(allow) == 0)
		vr_warning("proxy: no --allow pattern: every connection will be denied");
	o.allow = allow;
	o.ready_fd = STDOUT_FILENO;
	vr_cleanup_fd int audit_fd = -1;
	if (a.audit && strcmp(a.audit, "-") == 0) {
		o.audit_fd = STDERR_FILENO;
	} else if (a.audit) {
		audit_fd = open(a.audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
		if (audit_fd < 0) {
			vr_log_errno(errno, "--audit: cannot open %s", a.audit);
			return VR_EXIT_ERROR;
		}
		o.audit_fd = audit_fd;
	}
	vr_cleanup_fd int netns_fd = -1;
	if (a.netns) {
		netns_fd = open(a.netns, O_RDONLY | O_CLOEXEC);
		if (netns_fd < 0) {
			vr_log_errno(errno, "--netns: cannot open %s", a.netns);
			return VR_EXIT_ERROR;
		}
	}
	return vr_proxy_run(&o, netns_fd) < 0 ? VR_EXIT_ERROR : VR_EXIT_OK;
}
