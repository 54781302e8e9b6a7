/*
 * cli_dbd.c - the loomdbd connection and print_fields. See cli_dbd.h.
 */
#include "cli/cli_dbd.h"
#include "common/proto.h"
#include "common/xalloc.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool dbd_is_socket(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The SQLite StorageLoc of a readable slurmdbd.conf beside slurm.conf. */
static void dbd_sock_from_dbdconf(const loom_cli_t *cli, const loom_conf_t *conf, loom_sbuf_t *out)
{
    char *copy = loom_xstrdup(cli->conf_path ? cli->conf_path : conf->path);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s/slurmdbd.conf", dirname(copy));
    free(copy);
    FILE *fp = fopen(loom_sbuf_str(&path), "r");
    loom_sbuf_free(&path);
    if (!fp)
        return;
    char line[4096];
    while (fgets(line, sizeof(line), fp)) {
        if (strncasecmp(line, "StorageLoc=", 11) != 0 || line[11] != '/')
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        char *dir = dirname(line + 11);
        loom_sbuf_reset(out);
        loom_sbuf_addf(out, "%s/loomdbd.sock", dir);
    }
    fclose(fp);
}

static int dbd_address(loom_cli_t *cli, loom_sbuf_t *addr, bool *tcp, loom_err_t *err)
{
    const char *env = getenv("LOOM_DBD_ADDR");
    if (env && *env) {
        loom_sbuf_add(addr, env);
        *tcp = strncmp(env, "unix:", 5) != 0;
        return 0;
    }
    const loom_conf_t *conf = loom_cli_conf(cli, err);
    if (!conf)
        return err->code ? err->code : -LOOM_ECONFIG;
    loom_sbuf_t sock = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sock, "%s/loomdbd.sock",
                   conf->state_save_location ? conf->state_save_location : "/tmp");
    if (!dbd_is_socket(loom_sbuf_str(&sock)))
        dbd_sock_from_dbdconf(cli, conf, &sock);
    *tcp = !dbd_is_socket(loom_sbuf_str(&sock));
    if (!*tcp)
        loom_sbuf_addf(addr, "unix:%s", loom_sbuf_str(&sock));
    else
        loom_sbuf_addf(addr, "%s:%d",
                       conf->accounting_storage_host ? conf->accounting_storage_host : "localhost",
                       conf->accounting_storage_port > 0 ? (int)conf->accounting_storage_port
                                                         : 6819);
    loom_sbuf_free(&sock);
    return 0;
}

static int dbd_connect(loom_cli_t *cli, loom_rpc_t **rpc, loom_err_t *err)
{
    loom_sbuf_t addr = LOOM_SBUF_INIT;
    bool tcp = false;
    int rc = dbd_address(cli, &addr, &tcp, err);
    if (rc == 0 && tcp && !cli->key) {
        const loom_conf_t *conf = loom_cli_conf(cli, err);
        char *copy = loom_xstrdup(cli->conf_path ? cli->conf_path : conf ? conf->path : ".");
        loom_sbuf_t kp = LOOM_SBUF_INIT;
        loom_sbuf_addf(&kp, "%s/slurm.key", dirname(copy));
        loom_key_load(loom_sbuf_str(&kp), &cli->key, NULL);
        loom_sbuf_free(&kp);
        free(copy);
    }
    if (rc == 0) {
        *rpc = loom_rpc_connect(loom_sbuf_str(&addr), tcp ? cli->key : NULL, cli->timeout_ms, err);
        if (!*rpc)
            rc = err->code ? err->code : -LOOM_ECONNECT;
    }
    loom_sbuf_free(&addr);
    return rc;
}

int loom_dbd_call(loom_cli_t *cli, loom_rpc_t **rpc, const char *type, const json_t *body,
                  json_t **reply, loom_err_t *err)
{
    if (!*rpc) {
        int rc = dbd_connect(cli, rpc, err);
        if (rc < 0)
            return rc;
    }
    json_t *req = loom_msg_new(type, 0);
    if (body)
        json_object_update_missing(req, (json_t *)body);
    json_t *rep = NULL;
    int rc = loom_rpc_call(*rpc, req, &rep, err);
    json_decref(req);
    if (rc < 0)
        return rc;
    const char *msg = NULL;
    rc = loom_msg_rc(rep, &msg);
    if (rc < 0)
        loom_errf(err, rc, "%s", msg);
    if (reply)
        *reply = rep;
    else
        json_decref(rep);
    return rc;
}

void loom_pf_header(const loom_pf_t *pf, const loom_pf_col_t *cols, size_t n, loom_sbuf_t *out)
{
    if (pf->noheader)
        return;
    for (size_t i = 0; i < n; i++) {
        int w = abs(cols[i].width);
        if (pf->parsable) {
            loom_sbuf_add(out, cols[i].header);
            if (pf->parsable == 1 || i + 1 < n)
                loom_sbuf_add(out, pf->delim);
            continue;
        }
        loom_sbuf_addpad(out, cols[i].header, (size_t)w, cols[i].width > 0);
        loom_sbuf_addc(out, ' ');
    }
    loom_sbuf_addc(out, '\n');
    if (pf->parsable)
        return;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < abs(cols[i].width); k++)
            loom_sbuf_addc(out, '-');
        loom_sbuf_addc(out, ' ');
    }
    loom_sbuf_addc(out, '\n');
}

void loom_pf_cell(const loom_pf_t *pf, const char *val, int width, bool last, bool number,
                  loom_sbuf_t *out)
{
    if (!val)
        val = "";
    if (pf->parsable) {
        loom_sbuf_add(out, val);
        if (pf->parsable == 1 || !last)
            loom_sbuf_add(out, pf->delim);
        return;
    }
    size_t w = (size_t)abs(width), len = strlen(val);
    if (len > w && !number && w > 0) {
        loom_sbuf_addn(out, val, w - 1);
        loom_sbuf_addc(out, '+');
    } else if (len >= w) {
        loom_sbuf_add(out, val);
    } else {
        loom_sbuf_addpad(out, val, w, width > 0);
    }
    loom_sbuf_addc(out, ' ');
}
