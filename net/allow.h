/* The network allow-list: which host names and ports the sandbox may reach
 * through the proxy, and which resolved addresses are refused anyway.
 *
 * Pattern syntax (one `--net allow=` value is a comma-separated list):
 *   example.com        exactly that name, any port
 *   *.example.com      any name below example.com (a.example.com, a.b.example.com),
 *                      not example.com itself — list both if both are wanted
 *   example.com:443    that name, only port 443 (also *.example.com:443)
 *   198.51.100.7       an IP literal, compared as an address (also [2001:db8::1]:443)
 *   *                  any name (the address checks below still apply)
 * Names are compared case-insensitively, a trailing dot ignored. A bare
 * pattern allows any port: the name is the trust decision, and ports are
 * there to narrow it when wanted.
 *
 * Address checks: even an allowed name is refused when ANY of its resolved
 * addresses is loopback, private, link-local (cloud metadata), CGNAT,
 * unspecified, multicast, broadcast or reserved, including the IPv4-mapped /
 * -compatible / NAT64 forms of those, unless allow_private. DNS rebinding is
 * the classic bypass of name-based rules, so the proxy connects only to the
 * addresses it checked. */
#pragma once
#include <glib.h>

#define VR_NET_ERROR (vr_net_error_quark())
GQuark vr_net_error_quark(void);
enum { VR_NET_ERROR_PATTERN, VR_NET_ERROR_LAUNCH /* vault-run-proxy's options */ };

typedef struct VrNetAllow VrNetAllow;

VrNetAllow *vr_net_allow_new(void);
void vr_net_allow_free(VrNetAllow *allow);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrNetAllow, vr_net_allow_free)

/* Adds one `--net` value: "allow=P1,P2", "allow-localhost=PORT[/http|/tcp],...",
 * "allow-private", a bare "P1,P2", or several of these joined by ';'
 * ("allow=api.x.com;allow-localhost=11434"). Errors name the offending
 * pattern or port and what was wrong with it. */
gboolean vr_net_allow_add(VrNetAllow *allow, const char *spec, GError **error);
/* Every spec vr_net_allow_add took, in order (char *): with the private
 * flag, what makes the same list again in the proxy's own executable. */
const GPtrArray *vr_net_allow_specs(const VrNetAllow *allow);
gboolean vr_net_allow_get_private(const VrNetAllow *allow);
void vr_net_allow_set_private(VrNetAllow *allow, gboolean allow_private);
/* Number of patterns (0: everything is denied). */
guint vr_net_allow_count(const VrNetAllow *allow);

/* The pattern (as written) that allows host:port, or NULL when denied. host
 * is what the client asked for (name or IP literal, IPv6 without brackets). */
const char *vr_net_allow_match(const VrNetAllow *allow, const char *host, guint16 port);

/* Model-server bridges (`allow-localhost=`): the host's loopback PORT,
 * reached from 127.0.0.1:PORT inside the sandbox's netns. VR_BRIDGE_HTTP
 * lets through only the inference and listing paths (net/gate.h), and is
 * what a bare PORT of a known model server gets; VR_BRIDGE_TCP carries
 * every byte. */
typedef enum { VR_BRIDGE_HTTP, VR_BRIDGE_TCP } VrBridgeKind;
typedef struct {
	guint16 port;
	VrBridgeKind kind;
	char *rule; /* "allow-localhost=11434/http", for audit events and refusals */
} VrNetBridge;

/* At most this many ports: each is one listener (two with ::1) passed
 * from the netns in one message. */
#define VR_NET_MAX_BRIDGES 32

guint vr_net_allow_bridge_count(const VrNetAllow *allow);
const VrNetBridge *vr_net_allow_bridge(const VrNetAllow *allow, guint i);
/* The ports a bare allow-localhost=PORT filters as HTTP (0-terminated),
 * and whether port is one of them. */
extern const guint16 vr_net_model_server_ports[];
gboolean vr_net_is_model_server_port(guint16 port);

/* Whether a client-supplied host is a syntactically valid DNS name or IP
 * literal (refuses spaces, control bytes, empty labels, overlong names). */
gboolean vr_net_host_is_valid(const char *host);

/* An IP address as inet_pton reads it (dotted quad, or IPv6 without a
 * scope): the literals of patterns, compared as addresses. Not GIO's
 * GInetAddress, which the supervisor does not load (docs/PERFORMANCE.md
 * "Start-up"). */
typedef struct {
	int family; /* AF_INET, AF_INET6; 0 when not an address */
	guint8 bytes[16];
} VrIpAddr;

gboolean vr_ip_addr_parse(const char *text, VrIpAddr *ret);
gboolean vr_ip_addr_equal(const VrIpAddr *a, const VrIpAddr *b);

/* Why an address must not be reached from the sandbox ("loopback",
 * "private", "link-local", …), or NULL for an ordinary public address. */
const char *vr_net_addr_forbidden(const VrIpAddr *addr);
