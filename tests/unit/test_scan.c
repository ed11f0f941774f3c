/* Unit tests of the secret-content scanner (policy/scan.c): every rule has
 * true-positive vectors (the exact bytes that must be masked) and
 * false-positive vectors (documented shapes it must leave alone). The tokens
 * below are random strings of the right shape, not real credentials. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "policy/scan.h"
#include "policy/scan-private.h"

typedef struct {
	const char *rule;   /* expected rule id; NULL: no hit at all */
	const char *text;
	const char *secret; /* the exact bytes of the (single) hit */
} Vector;

#define PEM_BODY "MIIEowIBAAKCAQEAq9ZrQk3v8dZ\nb3BlbnNzaC1rZXktdjEAAAAA+/=\n"

static const Vector vectors[] = {
	/* pem-private-key */
	{"pem-private-key", "key:\n-----BEGIN RSA PRIVATE KEY-----\n" PEM_BODY "-----END RSA PRIVATE KEY-----\n", PEM_BODY},
	{"pem-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAA\r\n-----END OPENSSH PRIVATE KEY-----",
	 "b3BlbnNzaC1rZXktdjEAAAAA\r\n"},
	{"pem-private-key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG\n",
	 "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG\n"}, /* truncated: mask to the end */
	{"pem-private-key", "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n\"}",
	 "\\nMIIEvQIBADANBg\\n"},
	{NULL, "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n", NULL},
	{NULL, "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n", NULL},
	{NULL, "-- BEGIN PRIVATE KEY: the header we look for\n", NULL},
	{NULL, "Finds `-----BEGIN RSA PRIVATE KEY-----` blocks and masks them.\n", NULL},
	/* aws-access-key-id */
	{"aws-access-key-id", "aws_access_key_id = AKIAOXYIMCFIP6NZB353\n", "AKIAOXYIMCFIP6NZB353"},
	{"aws-access-key-id", "{\"AccessKeyId\":\"ASIAY5MZF5OBR704YHQG\"}", "ASIAY5MZF5OBR704YHQG"},
	{NULL, "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n", NULL},
	{NULL, "XAKIAOXYIMCFIP6NZB353 AKIAOXYIMCFIP6NZB3534 AKIA1234 AKIAoxyimcfip6nzb353", NULL},
	/* aws-secret-access-key */
	{"aws-secret-access-key", "aws_secret_access_key = iXWnhREl+Asie/ys64KT2rumOT+zNtTKjCSFbLRC\n",
	 "iXWnhREl+Asie/ys64KT2rumOT+zNtTKjCSFbLRC"},
	{"aws-secret-access-key", "  \"SecretAccessKey\": \"iXWnhREl+Asie/ys64KT2rumOT+zNtTKjCSFbLRC\",",
	 "iXWnhREl+Asie/ys64KT2rumOT+zNtTKjCSFbLRC"},
	{NULL, "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", NULL},
	{NULL, "checksum = iXWnhREl+Asie/ys64KT2rumOT+zNtTKjCSFbLRC\n", NULL},
	/* github-token */
	{"github-token", "GH=ghp_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi", "ghp_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi"},
	{"github-token", "auth gho_AKCAAfLesTgcfQgWHHxjZ7GFTjMemb6ivyQK\n", "gho_AKCAAfLesTgcfQgWHHxjZ7GFTjMemb6ivyQK"},
	{"github-token", "GITHUB_TOKEN=\"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\"",
	 "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"},
	{NULL, "ghp_short ghx_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi xghp_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi github_pat_", NULL},
	/* gitlab-token */
	{"gitlab-token", "export GL=glpat-zDPXzaLLkPZCLk1VPMTL\n", "glpat-zDPXzaLLkPZCLk1VPMTL"},
	{NULL, "see glpat-short and glpat- docs", NULL},
	/* slack-token */
	{"slack-token", "slack: xoxb-137569434696-8599563788142-eFU3rAXhN10rsrZ0Grr4OApx\n",
	 "xoxb-137569434696-8599563788142-eFU3rAXhN10rsrZ0Grr4OApx"},
	{NULL, "xoxo-hugs-and-kisses-forever xoxb-123", NULL},
	/* stripe-key */
	{"stripe-key", "Stripe.api_key = sk_live_p9pYGVDpo0ZMH1mxFXgYhyfP;", "sk_live_p9pYGVDpo0ZMH1mxFXgYhyfP"},
	{"stripe-key", "rk_live_kXKB6cY6ibNmRqfgDD3Q5s7K", "rk_live_kXKB6cY6ibNmRqfgDD3Q5s7K"},
	{"stripe-key", "STRIPE=sk_test_fiMw3PeuYc16f2iPZx1e0oUc ", "sk_test_fiMw3PeuYc16f2iPZx1e0oUc"},
	{NULL, "pk_live_p9pYGVDpo0ZMH1mxFXgYhyfP sk_live_short disk_test_p9pYGVDpo0ZMH1mxFXgYhyfP", NULL},
	/* openai-api-key */
	{"openai-api-key", "OPENAI_API_KEY=sk-MYuosVw9ueH5h6UNwBkkq5yjBUYegIofs7lvVmg8ddJYVl0k\n",
	 "sk-MYuosVw9ueH5h6UNwBkkq5yjBUYegIofs7lvVmg8ddJYVl0k"},
	{"openai-api-key", "key='sk-proj-PLF9okrqCPB0wvr4h5K13V_UxNI8qJ-LBYr_8pLY'", "sk-proj-PLF9okrqCPB0wvr4h5K13V_UxNI8qJ-LBYr_8pLY"},
	{NULL, "<div class=\"sk-learn-estimator-container-with-a-long-name\"> task-manager disk-usage", NULL},
	/* anthropic-api-key */
	{"anthropic-api-key", "ANTHROPIC_API_KEY: sk-ant-api03-eeVLSWdsbkx5q2nVfVTnOn9vE9USV2VesOheDU9U-AA\n",
	 "sk-ant-api03-eeVLSWdsbkx5q2nVfVTnOn9vE9USV2VesOheDU9U-AA"},
	{NULL, "prefix sk-ant-short here", NULL},
	/* google-api-key */
	{"google-api-key", "const k = \"AIza8wMrIc4KH6LLZ-5l-4RrnU6U8XAwselNBsZ\";", "AIza8wMrIc4KH6LLZ-5l-4RrnU6U8XAwselNBsZ"},
	{NULL, "AIza8wMrIc4KH6LLZ-5l-4RrnU6U8XAwselNBs AIza is a prefix; AIza8wMrIc4KH6LLZ-5l-4RrnU6U8XAwselNBsZZ", NULL},
	/* jwt */
	{"jwt", "Authorization bearer: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n",
	 "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
	{NULL, "header eyJhbGciOiJIUzI1NiJ9 only; eyJ.a.b; eyJhbGciOiJIUzI1NiJ9.notjson.sig; key eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.", NULL},
	/* url-credentials: every password of a real host is masked (git remotes,
	 * DATABASE_URL, pip's index-url, .npmrc registries, brokers, proxies)… */
	{"url-credentials", "url = https://alice:q84Zm9hacCT1nuub@git.acme-corp.io/repo.git\n", "q84Zm9hacCT1nuub"},
	{"url-credentials", "DATABASE_URL=postgres://app:Zx%40p9Lm2@db:5432/app", "Zx%40p9Lm2"},
	{"url-credentials", "git clone https://aVbViKtOtac0nvu2fAp6@host.example/x", "aVbViKtOtac0nvu2fAp6"},
	{"url-credentials", "[remote \"origin\"]\n\turl = https://bot:Sup3rS3cret@gitlab.acme-corp.io/x.git\n", "Sup3rS3cret"},
	{"url-credentials", "\turl = https://deploy:letmein@git.acme-corp.io/app.git\n", "letmein"},
	{"url-credentials", "git clone https://oauth2:secretsauce@gitlab.acme-corp.io/x.git", "secretsauce"},
	{"url-credentials", "DATABASE_URL=postgres://app:hunter22@db.internal:5432/app\n", "hunter22"},
	{"url-credentials", "DATABASE_URL=\"postgresql://svc_user:V9dk2LmQp@prod-db.acme.io:5432/core?sslmode=require\"",
	 "V9dk2LmQp"},
	{"url-credentials", "[global]\nindex-url = https://__token__:pypi-AgEIcHlwaS5vcmc@pypi.acme.io/simple\n",
	 "pypi-AgEIcHlwaS5vcmc"},
	{"url-credentials", "extra-index-url = https://ci:mypassword@nexus.acme.io/repository/pypi/simple", "mypassword"},
	{"url-credentials", "registry=https://deploy:npm_s3cr3t_value@npm.acme.io/\n", "npm_s3cr3t_value"},
	{"url-credentials", "REDIS_URL=redis://:Wq8vNbT3@cache.acme.io:6379/0", "Wq8vNbT3"},
	{"url-credentials", "MONGO_URI=mongodb+srv://admin:Mongo2024x@cluster0.ab1cd.mongodb.net/db", "Mongo2024x"},
	{"url-credentials", "BROKER_URL=amqp://rabbit:Carrot99@mq.acme.io:5672/%2f", "Carrot99"},
	{"url-credentials", "export https_proxy=http://alice:Spring2025!@proxy.corp.acme.io:3128", "Spring2025!"},
	{"url-credentials", "mysql://root:R00tPw9@10.0.0.5/app", "R00tPw9"},
	{"url-credentials", "postgres://u:Zx9pLm2q@[2001:db8::5]:5432/db", "Zx9pLm2q"},
	{"url-credentials", "https://u:K8jq2Lp9@example.company.io/ https://v@x", "K8jq2Lp9"},
	{"url-credentials", "https://u:K8jq2Lp9@myexample.com/", "K8jq2Lp9"},
	{"url-credentials", "https://u:K8jq2Lp9@localhost.acme.io/", "K8jq2Lp9"},
	{"url-credentials", "  - DATABASE_URL=postgres://app:Secret2024@db:5432/app\n", "Secret2024"},
	/* a token the URL rule and the GitLab rule both see: one hit, the
	 * whole password, named by the specific rule */
	{"gitlab-token", "url = https://bot:glpat-9Xk2LmQp7RtVwZy3N4bC.01.0z1abc2de@gitlab.acme-corp.io/x.git\n",
	 "glpat-9Xk2LmQp7RtVwZy3N4bC.01.0z1abc2de"},
	/* …but not what no one's server or no one's secret: loopback, the
	 * documentation and test domains, a password equal to the user, the
	 * well-known defaults of compose files and READMEs, template slots. */
	{NULL, "git@github.com:org/repo.git ssh://git@github.com/org/repo mailto:bob@example.com", NULL},
	{NULL, "https://user:${TOKEN}@host https://user:<password>@host https://user:password@host https://u:****@h", NULL},
	{NULL, "@decorator\ndef f(): return 'x@y'\n", NULL},
	{NULL, "cvs://:pserver:anoncvs@sources.acme.io:/cvs/src\n\"git fetch http://user:pass@host/repo\"\n"
	       "new URL('http://abc:xyz@example.com')\n", NULL},
	{NULL, "DATABASE_URL=postgres://postgres:postgres@localhost:5432/app\n"
	       "DATABASE_URL=postgres://app:Zx9pLm2q@localhost/app\n"
	       "REDIS_URL=redis://:S3cr3tPw@127.0.0.1:6379\nhttp://admin:K8jq2Lp9@[::1]:8080/\n"
	       "mysql://root:R00tPw9@0.0.0.0:3306\nhttp://u:K8jq2Lp9@LOCALHOST.:80\n", NULL},
	{NULL, "url = https://user:Hx7kLm2Q@git.example.com/repo.git\nhttps://u:Hx7kLm2Q@api.example.org/v1\n"
	       "https://u:Hx7kLm2Q@example.net\nhttps://u:Hx7kLm2Q@service.test/\nhttps://u:Hx7kLm2Q@db.localhost:5432\n"
	       "https://u:Hx7kLm2Q@x.invalid\nhttp://u:Hx7kLm2Q@host.example/\n", NULL},
	{NULL, "      RABBITMQ_URL: amqp://guest:guest@rabbitmq:5672/\n"
	       "      DATABASE_URL: postgres://app:app@db:5432/app\n"
	       "      ME_CONFIG_MONGODB_URL: mongodb://root:example@mongo:27017/\n"
	       "      DATABASE_URL: postgresql://user:password@db:5432/mydb\n"
	       "      REDIS_URL: redis://:changeme@redis:6379\n"
	       "      DB: postgres://postgres:mysecretpassword@db:5432/postgres\n", NULL},
	{NULL, "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@${DB_HOST}:5432/${DB_NAME}\n"
	       "url = https://<user>:<token>@gitlab.acme-corp.io/x.git\n"
	       "git push https://USER:$TOKEN@github.com/org/repo.git\n"
	       "url: https://user:{{ .Values.password }}@host\nconn = 'https://user:%(password)s@host'\n"
	       "https://user:xxxxxxxx@host https://user:your-password@host https://u:YOUR_TOKEN@gitlab.acme-corp.io\n", NULL},
	{NULL, "jdbc:postgresql://localhost:5432/db?user=fred&password=secret\n"
	       "see https://acme.io/users/bob@acme.io and http://[::1]:8080/\n", NULL},
	/* http-authorization */
	{"http-authorization", "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzXzEyMw==\n",
	 "eC1hY2Nlc3MtdG9rZW46Z2hzXzEyMw=="},
	{"http-authorization", "curl -H \"Authorization: Bearer 2a3RgHGmE6WT0A9f8e7d\" https://api", "2a3RgHGmE6WT0A9f8e7d"},
	{NULL, "headers[\"Authorization\"] = f\"Bearer {token}\"\ncurl -H \"Authorization: Bearer $TOKEN\"\nAuthorization: Basic <base64>\n", NULL},
	/* generic-secret-assignment */
	{"generic-secret-assignment", "DB_PASSWORD=Tr0ub4dor9xQz!\n", "Tr0ub4dor9xQz!"},
	{"generic-secret-assignment", "api_key: \"q84Zm9hacCT1nuub\"\n", "q84Zm9hacCT1nuub"},
	{"generic-secret-assignment", "  \"client_secret\": \"8f3kLq9Zp2Xw7Rt4\",\n", "8f3kLq9Zp2Xw7Rt4"},
	{"generic-secret-assignment", "SECRET_KEY = 'dj4ng0-k3y-Qw9Zx8Lp7Vm6Nb'\n", "dj4ng0-k3y-Qw9Zx8Lp7Vm6Nb"},
	{"generic-secret-assignment", "\ttoken := \"a9F3kL0qZ8pW2xR7\"\n", "a9F3kL0qZ8pW2xR7"},
	{"generic-secret-assignment", "$db = ['password' => 'Xk9#mQ2!vL7pZ4'];", "Xk9#mQ2!vL7pZ4"},
	{NULL, "password = changeme\npassword=${DB_PASSWORD}\ntoken = \"<your-token>\"\n", NULL},
	{NULL, "password = os.environ[\"DB_PASSWORD\"]\npassword = get_password()\ntoken = self.token\n", NULL},
	{NULL, "password: ********\nmax_tokens = 4096\nsecret = True\ntoken_type = \"bearer\"\n", NULL},
	{NULL, "if password == \"Tr0ub4dor9xQz\": pass\nPWD=/home/user/projects/x9\nOLDPWD=/var/lib/x9z\n", NULL},
	{NULL, "secret: \"Please do not share this\"\npassword = \"aaaaaaaaaaaa\"\npassword = \"password123\"\n", NULL},
	{NULL, "api_key = process.env.API_KEY;\nstd::string token::value = x;\n", NULL},
	{NULL, "\t\t_M_token = __it->second;\nrandom_device(const std::string& __token = \"/dev/urandom\")\n"
	       "def token      : ValueType<0, 248>;\nusing _Token = __use_future_ct<decay_t<_Func>, _Alloc>;\n", NULL},
};

static GArray *scan(const char *text, size_t len)
{
	GArray *hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(text, len, hits);
	return hits;
}

static void test_vectors(void **state)
{
	int failures = 0;
	for (size_t i = 0; i < G_N_ELEMENTS(vectors); i++) {
		const Vector *v = &vectors[i];
		g_autoptr(GArray) hits = scan(v->text, strlen(v->text));
		if (!v->rule) {
			if (hits->len != 0) {
				const VrScanHit *h = &g_array_index(hits, VrScanHit, 0);
				printf("vector %zu: unexpected %s at %zu+%zu: %.*s\n", i, h->rule->id, h->start, h->len,
				       (int)h->len, v->text + h->start);
				failures++;
			}
			continue;
		}
		const char *secret = strstr(v->text, v->secret);
		assert_non_null(secret);
		if (hits->len != 1) {
			printf("vector %zu (%s): %u hits, want 1\n", i, v->rule, hits->len);
			for (guint j = 0; j < hits->len; j++) {
				const VrScanHit *h = &g_array_index(hits, VrScanHit, j);
				printf("  %s at %zu+%zu\n", h->rule->id, h->start, h->len);
			}
			failures++;
			continue;
		}
		const VrScanHit *h = &g_array_index(hits, VrScanHit, 0);
		if (strcmp(h->rule->id, v->rule) != 0 || h->start != (size_t)(secret - v->text) ||
		    h->len != strlen(v->secret)) {
			printf("vector %zu: got %s at %zu+%zu (%.*s), want %s at %zu+%zu\n", i, h->rule->id, h->start,
			       h->len, (int)h->len, v->text + h->start, v->rule, (size_t)(secret - v->text),
			       strlen(v->secret));
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

/* Every rule has at least one true-positive vector (its false-positive
 * vectors sit next to it in the table), and ids are unique. */
static void test_every_rule_has_vectors(void **state)
{
	size_t n;
	const VrScanRule *rules = vr_scan_rules(&n);
	assert_true(n >= 14);
	for (size_t r = 0; r < n; r++) {
		gboolean seen = FALSE;
		for (size_t i = 0; i < G_N_ELEMENTS(vectors); i++)
			if (vectors[i].rule && strcmp(vectors[i].rule, rules[r].id) == 0)
				seen = TRUE;
		if (!seen)
			printf("rule %s has no vector\n", rules[r].id);
		assert_true(seen);
		assert_ptr_equal(vr_scan_rule_lookup(rules[r].id), &rules[r]);
		assert_non_null(rules[r].description);
		for (size_t o = 0; o < r; o++)
			assert_string_not_equal(rules[o].id, rules[r].id);
	}
	assert_null(vr_scan_rule_lookup("no-such-rule"));
}

/* Masking keeps the length and newlines, replaces exactly the hit bytes, and
 * leaves no byte of the secret. */
static void test_mask(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(vectors); i++) {
		const Vector *v = &vectors[i];
		size_t len = strlen(v->text);
		g_autofree char *buf = g_strdup(v->text);
		g_autoptr(GArray) hits = scan(buf, len);
		vr_scan_mask(buf, len, hits);
		assert_int_equal(strlen(buf), len);
		for (size_t j = 0; j < len; j++) {
			gboolean in = FALSE;
			for (guint k = 0; k < hits->len; k++) {
				const VrScanHit *h = &g_array_index(hits, VrScanHit, k);
				in |= j >= h->start && j < h->start + h->len;
			}
			if (in && v->text[j] != '\n' && v->text[j] != '\r')
				assert_int_equal(buf[j], '*');
			else
				assert_int_equal(buf[j], v->text[j]);
		}
		/* A masked buffer has nothing left to find but PEM markers (the
		 * rule keys on the BEGIN line, which masking keeps). */
		g_autoptr(GArray) again = scan(buf, len);
		for (guint k = 0; k < again->len; k++)
			assert_string_equal(g_array_index(again, VrScanHit, k).rule->id, "pem-private-key");
	}
	const char *pem = "-----BEGIN RSA PRIVATE KEY-----\n" PEM_BODY "-----END RSA PRIVATE KEY-----\n";
	g_autofree char *buf = g_strdup(pem);
	g_autoptr(GArray) hits = scan(buf, strlen(buf));
	vr_scan_mask(buf, strlen(buf), hits);
	assert_string_equal(buf, "-----BEGIN RSA PRIVATE KEY-----\n***************************\n"
	                         "***************************\n-----END RSA PRIVATE KEY-----\n");
	/* Out-of-range hits are clipped, not written past the buffer. */
	VrScanHit far = {strlen(buf) - 2, 100, hits->len ? g_array_index(hits, VrScanHit, 0).rule : NULL};
	g_array_append_val(hits, far);
	size_t len = strlen(buf);
	vr_scan_mask(buf, len, hits);
	assert_int_equal(buf[len - 2], '*');
	assert_int_equal(buf[len - 1], '\n');
	assert_int_equal(buf[len], '\0');
}

/* A specific token inside a generic assignment is one hit, named by the
 * specific rule, and hits come out sorted and disjoint. */
static void test_merge_and_order(void **state)
{
	const char *text = "GITHUB_TOKEN=ghp_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi\n"
	                   "x = AKIAOXYIMCFIP6NZB353 url=https://u:q84Zm9hacCT1nuub@h.acme.io\n";
	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	VrScanHit sentinel = {999, 1, NULL};
	g_array_append_val(hits, sentinel); /* earlier hits are left alone */
	vr_scan_buffer(text, strlen(text), hits);
	assert_int_equal(hits->len, 4);
	assert_int_equal(g_array_index(hits, VrScanHit, 0).start, 999);
	assert_string_equal(g_array_index(hits, VrScanHit, 1).rule->id, "github-token");
	assert_string_equal(g_array_index(hits, VrScanHit, 2).rule->id, "aws-access-key-id");
	assert_string_equal(g_array_index(hits, VrScanHit, 3).rule->id, "url-credentials");
	for (guint i = 2; i < hits->len; i++) {
		const VrScanHit *a = &g_array_index(hits, VrScanHit, i - 1), *b = &g_array_index(hits, VrScanHit, i);
		assert_true(a->start + a->len <= b->start);
	}
}

/* Every prefix of every vector, in a buffer of exactly that size (so ASan
 * sees any overread), gives in-bounds hits; every suffix too. */
static void test_truncations_stay_in_bounds(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(vectors); i++) {
		size_t len = strlen(vectors[i].text);
		for (size_t cut = 0; cut <= len; cut++) {
			for (int side = 0; side < 2; side++) {
				size_t n = side ? len - cut : cut;
				char *buf = g_malloc(n ? n : 1);
				memcpy(buf, side ? vectors[i].text + cut : vectors[i].text, n);
				g_autoptr(GArray) hits = scan(buf, n);
				for (guint k = 0; k < hits->len; k++) {
					const VrScanHit *h = &g_array_index(hits, VrScanHit, k);
					assert_true(h->len > 0 && h->start + h->len <= n);
				}
				g_free(buf);
			}
		}
	}
}

/* Ordinary source text, many times the vector block size: no hit. Random
 * bytes: hits (if any) stay in bounds. */
static void test_no_hits_in_code(void **state)
{
	static const char *const lines[] = {
		"static int parse_args(int argc, char **argv) {\n",
		"\tconst char *password_file = getenv(\"PASSWORD_FILE\");\n",
		"\tif (token == NULL || key_len < 16) return -EINVAL;\n",
		"# Read the secret from the environment, never from the repo.\n",
		"api_key = os.environ.get(\"API_KEY\")\n",
		"    url: \"https://github.com/org/repo.git\"\n",
		"x = {\"type\": \"service_account\", \"project_id\": \"demo-123\"}\n",
		"export PATH=\"$HOME/.local/bin:$PATH\"\n",
		"for (size_t i = 0; i < n; i++) sk_push(stack, items[i]);\n",
		"- name: Checkout\n  uses: actions/checkout@v4\n",
		"Authorization is checked by the gateway: see docs/auth.md\n",
		"-----BEGIN CERTIFICATE-----\n",
		"password: \"${DB_PASSWORD}\"  # set in CI\n",
	};
	GString *s = g_string_new(NULL);
	for (int i = 0; i < 4000; i++)
		g_string_append(s, lines[(i * 7) % G_N_ELEMENTS(lines)]);
	g_autoptr(GArray) hits = scan(s->str, s->len);
	for (guint k = 0; k < hits->len; k++) {
		const VrScanHit *h = &g_array_index(hits, VrScanHit, k);
		printf("unexpected %s: %.*s\n", h->rule->id, (int)h->len, s->str + h->start);
	}
	assert_int_equal(hits->len, 0);
	g_string_free(s, TRUE);

	GRand *r = g_rand_new_with_seed(8);
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)g_rand_int_range(r, 0, 4096);
		char *buf = g_malloc(n ? n : 1);
		for (size_t i = 0; i < n; i++)
			buf[i] = "AKIAghp_-B=:@eyJ.x/\n 0aZ"[g_rand_int_range(r, 0, 24)];
		g_autoptr(GArray) h = scan(buf, n);
		for (guint k = 0; k < h->len; k++)
			assert_true(g_array_index(h, VrScanHit, k).start + g_array_index(h, VrScanHit, k).len <= n);
		g_free(buf);
	}
	g_rand_free(r);
}

/* The AVX2 prefilter drops '=' and ':' anchors by the letters before them;
 * it must drop only what the assignment matcher would reject: the same hits
 * as the portable path, on text built from the pieces that matter (key
 * suffixes, blanks, quotes, operators, values), at every alignment. */
static void test_fast_path_equals_portable(void **state)
{
	static const char *const atoms[] = {
		"password", "PASSWORD", "pwd", "passwd", "secret", "token", "Token", "api_key", "apiKey",
		"auth_token", "private.key", "aws_secret_access_key", "authorization", "passphrase", "ion", "ken",
		"key", "ret", " ", "  ", "\t", "=", ":", ":=", "=>", "==", "::", "://", "\"", "'", "`", "]", "[",
		"_", "-", ".", "\n", "(", ")", "x", "d", "e", "n", "t", "y", "r", "w", "s", "o", "Q9z!kP2#mW8v",
		"aB3dE5fG7hJ9kL1m", "${X}", "1234", "https://u:", "@h", "AKIA" "OXYIMCFIP6NZB353", "eyJ",
	};
	GRand *r = g_rand_new_with_seed(9);
	GString *s = g_string_new(NULL);
	for (int round = 0; round < 20000; round++) {
		g_string_truncate(s, 0);
		int n = g_rand_int_range(r, 1, 60);
		for (int k = 0; k < n; k++)
			g_string_append(s, atoms[g_rand_int_range(r, 0, G_N_ELEMENTS(atoms))]);
		for (size_t off = 0; off < 4 && off < s->len; off++) {
			g_autoptr(GArray) fast = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
			g_autoptr(GArray) portable = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
			vr_scan_buffer(s->str + off, s->len - off, fast);
			vr_scan_buffer_portable(s->str + off, s->len - off, portable);
			/* (no memcmp of empty arrays: their data may be NULL) */
			if (fast->len != portable->len ||
			    (fast->len && memcmp(fast->data, portable->data, fast->len * sizeof(VrScanHit)) != 0))
				fail_msg("fast and portable paths differ on '%s'", s->str + off);
		}
	}
	g_string_free(s, TRUE);
	g_rand_free(r);
}

static void test_line_col(void **state)
{
	const char *t = "ab\ncde\n\nx";
	size_t line, col;
	vr_scan_line_col(t, strlen(t), 0, &line, &col);
	assert_int_equal(line, 1), assert_int_equal(col, 1);
	vr_scan_line_col(t, strlen(t), 4, &line, &col);
	assert_int_equal(line, 2), assert_int_equal(col, 2);
	vr_scan_line_col(t, strlen(t), 8, &line, &col);
	assert_int_equal(line, 4), assert_int_equal(col, 1);
	vr_scan_line_col(t, strlen(t), 100, &line, &col);
	assert_int_equal(line, 4), assert_int_equal(col, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_every_rule_has_vectors),
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_merge_and_order),
		cmocka_unit_test(test_truncations_stay_in_bounds),
		cmocka_unit_test(test_no_hits_in_code),
		cmocka_unit_test(test_line_col),
		cmocka_unit_test(test_fast_path_equals_portable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
