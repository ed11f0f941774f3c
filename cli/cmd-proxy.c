/* vault-run proxy: the network proxy of `--net allow=…` in the foreground,
 * for tests and debugging. Prints "http=HOST:PORT socks=HOST:PORT" on stdout
 * once it listens (useful with port 0), then serves until SIGTERM/SIGINT. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "net/allow.h"
#include "net/proxy.h"

static void usage(FILE *f)
{
	fputs("usage: vault-run proxy [--listen HOST:PORT] [--socks-port PORT] --allow PATTERN[,PATTERN...]...\n"
	      "                       [--allow-private] [--allow-localhost PORT[/http|/tcp],...]\n"
	      "                       [--audit FILE|-] [--netns PATH]\n"
	      "  --listen HOST:PORT  HTTP/CONNECT proxy address (default 127.0.0.1:3128; port 0: any)\n"
	      "  --socks-port PORT   SOCKS5 port on the same host (default: HTTP port + 1, or any if 0)\n"
	      "  --allow PATTERNS    host, *.domain, host:port, IP literal; repeatable (default: deny all)\n"
	      "  --allow-private     allow names resolving to loopback/private/link-local addresses\n"
	      "  --allow-localhost PORTS  bridge 127.0.0.1:PORT inside --netns to this netns's\n"
	      "                      127.0.0.1:PORT (model servers: inference paths only)\n"
	      "  --audit FILE|-      write one JSON line per connection (- is stderr)\n"
	      "  --netns PATH        listen inside that network namespace (e.g. /proc/PID/ns/net)\n",
	      f);
}

static gboolean parse_port(const char *s, guint64 *ret)
{
	return *s && g_ascii_string_to_unsigned(s, 10, 0, 65535, ret, NULL);
}

int vr_cmd_proxy(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},   {"socks-port", required_argument, NULL, 's'},
		{"allow", required_argument, NULL, 'a'},    {"allow-private", no_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'A'},    {"netns", required_argument, NULL, 'n'},
		{"allow-localhost", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},           {0},
	};
	g_autoptr(VrNetAllow) allow = vr_net_allow_new();
	g_autoptr(GError) error = NULL;
	g_autofree char *host = g_strdup("127.0.0.1");
	guint64 http_port = VR_PROXY_DEFAULT_HTTP_PORT, socks_port = 0;
	gboolean socks_given = FALSE;
	const char *audit = NULL, *netns = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': {
			const char *colon = strrchr(optarg, ':');
			if (!colon || !parse_port(colon + 1, &http_port)) {
				vr_error("--listen: expected HOST:PORT, got '%s'", optarg);
				return VR_EXIT_ERROR;
			}
			g_free(host);
			host = g_strndup(optarg, (gsize)(colon - optarg));
			if (host[0] == '[' && host[strlen(host) - 1] == ']') {
				char *inner = g_strndup(host + 1, strlen(host) - 2);
				g_free(host);
				host = inner;
			}
			break;
		}
		case 's':
			if (!parse_port(optarg, &socks_port)) {
				vr_error("--socks-port: expected a port from 0 to 65535, got '%s'", optarg);
				return VR_EXIT_ERROR;
			}
			socks_given = TRUE;
			break;
		case 'a':
			if (!vr_net_allow_add(allow, optarg, &error)) {
				vr_error("--allow: %s", error->message);
				return VR_EXIT_ERROR;
			}
			break;
		case 'p': vr_net_allow_set_private(allow, TRUE); break;
		case 'L': {
			g_autofree char *item = g_strconcat("allow-localhost=", optarg, NULL);
			if (!vr_net_allow_add(allow, item, &error)) {
				vr_error("--allow-localhost: %s", error->message);
				return VR_EXIT_ERROR;
			}
			break;
		}
		case 'A': audit = optarg; break;
		case 'n': netns = optarg; break;
		case 'h': usage(stdout); return VR_EXIT_OK;
		default: usage(stderr); return VR_EXIT_ERROR;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return VR_EXIT_ERROR;
	}
	if (!socks_given)
		socks_port = http_port == 0 ? 0 : http_port + 1;
	if (socks_port > 65535) {
		vr_error("--listen: no room for the SOCKS port after %" G_GUINT64_FORMAT "; use --socks-port",
		         http_port);
		return VR_EXIT_ERROR;
	}
	if (vr_net_allow_bridge_count(allow) && !netns) {
		vr_error("--allow-localhost: needs --netns (inside this netns 127.0.0.1:PORT is the server itself)");
		return VR_EXIT_ERROR;
	}
	if (vr_net_allow_count(allow) == 0 && vr_net_allow_bridge_count(allow) == 0)
		vr_warning("proxy: no --allow pattern: every connection will be denied");

	VrProxyOptions o;
	vr_proxy_options_init(&o);
	o.allow = allow;
	o.listen_host = host;
	o.http_port = (guint16)http_port;
	o.socks_port = (guint16)socks_port;
	o.ready_fd = STDOUT_FILENO;
	int audit_fd = -1;
	if (audit && strcmp(audit, "-") == 0) {
		o.audit_fd = STDERR_FILENO;
	} else if (audit) {
		audit_fd = open(audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
		if (audit_fd < 0) {
			vr_log_errno(errno, "--audit: cannot open %s", audit);
			return VR_EXIT_ERROR;
		}
		o.audit_fd = audit_fd;
	}
	int netns_fd = -1;
	if (netns) {
		netns_fd = open(netns, O_RDONLY | O_CLOEXEC);
		if (netns_fd < 0) {
			vr_log_errno(errno, "--netns: cannot open %s", netns);
			return VR_EXIT_ERROR;
		}
	}
	int r = vr_proxy_run(&o, netns_fd);
	if (netns_fd >= 0)
		close(netns_fd);
	if (audit_fd >= 0)
		close(audit_fd);
	return r < 0 ? VR_EXIT_ERROR : VR_EXIT_OK;
}
