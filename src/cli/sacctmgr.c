/*
 * sacctmgr.c - sacctmgr: options, the command word and the entity, the
 * commit question (CLI_SPEC §10). Talks to loomdbd (cli_dbd.h).
 *
 * Without -i, changes are previewed (a dry run), summarised, and committed
 * only after "y" to "Would you like to commit changes? (You have 30 seconds
 * to decide)". Where Slurm 22.05 loops forever on a closed stdin, sacctmgr
 * discards the changes instead.
 */
#include "cli/sacctmgr.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int sacctmgr_entity(const char *w)
{
    static const struct {
        const char *name;
        int ent;
    } ents[] = {
        {"account", SAM_ACCOUNT},  {"accounts", SAM_ACCOUNT},  {"user", SAM_USER},
        {"users", SAM_USER},       {"qos", SAM_QOS},           {"cluster", SAM_CLUSTER},
        {"clusters", SAM_CLUSTER}, {"association", SAM_ASSOC}, {"associations", SAM_ASSOC},
        {"assoc", SAM_ASSOC},      {"assocs", SAM_ASSOC},
    };
    for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
        if (strcasecmp(ents[i].name, w) == 0)
            return ents[i].ent;
    return -1;
}

bool sam_commit_check(sam_t *s)
{
    loom_cli_flush(&s->out);
    printf("Would you like to commit changes? (You have 30 seconds to decide)\n");
    for (;;) {
        printf("(N/y): ");
        fflush(stdout);
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, 30000) <= 0) {
            printf("timeout\n");
            return false;
        }
        int c = getchar();
        printf("\n");
        if (c == EOF || c == 'n' || c == 'N' || c == '\n')
            return false;
        if (c == 'y' || c == 'Y')
            return true;
        printf("Y or N please\n");
    }
}

static int sacctmgr_usage(FILE *fp, int rc)
{
    fprintf(fp, "Usage: sacctmgr [-i] [-n] [-p|-P] [-s] [--json] <command> <entity> [where ...] "
                "[set ...] [format=...]\n");
    return rc;
}

static int sacctmgr_opts(sam_t *s, int argc, char **argv)
{
    static const struct option longopts[] = {{"immediate", no_argument, NULL, 'i'},
                                             {"noheader", no_argument, NULL, 'n'},
                                             {"parsable", no_argument, NULL, 'p'},
                                             {"parsable2", no_argument, NULL, 'P'},
                                             {"associations", no_argument, NULL, 's'},
                                             {"quiet", no_argument, NULL, 'Q'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"version", no_argument, NULL, 'V'},
                                             {"json", no_argument, NULL, 'J'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"oneliner", no_argument, NULL, 'o'},
                                             {"readonly", no_argument, NULL, 'r'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "inoprPsQvVhM:", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            s->immediate = true;
            break;
        case 'n':
            s->pf.noheader = true;
            break;
        case 'p':
            s->pf.parsable = 1;
            break;
        case 'P':
            s->pf.parsable = 2;
            break;
        case 's':
            s->withassoc = true;
            break;
        case 'J':
            s->json = true;
            break;
        case 'r':
            s->readonly = true;
            break;
        case 'o': /* one record a line: what Loom's show prints anyway */
        case 'Q':
        case 'v':
        case 'M':
            break;
        case 'V':
            loom_cli_version();
            exit(0);
        case 'h':
            exit(sacctmgr_usage(stdout, 0));
        default:
            fprintf(stderr, "Try \"sacctmgr --help\" for more information\n");
            return -1;
        }
    }
    return optind;
}

static int sacctmgr_run(sam_t *s, int argc, char **argv)
{
    if (argc < 1)
        return sacctmgr_usage(stderr, 1);
    const char *cmd = argv[0];
    int ent = argc > 1 ? sacctmgr_entity(argv[1]) : -1;
    bool show = !strcasecmp(cmd, "show") || !strcasecmp(cmd, "list");
    if (ent < 0 && show && argc > 1 && !strcasecmp(argv[1], "tres"))
        return sam_show_tres(s, argc - 2, argv + 2);
    if (ent < 0 && show && argc > 1 && sam_show_none(s, argv[1]) == 0)
        return 0;
    if (ent < 0 && show) {
        fprintf(stderr, "No valid entity in list command\n"
                        "Input line must include \"Account\", \"Association\", \"Cluster\", "
                        "\"Configuration\",\n\"Event\", \"Federation\", \"Problem\", \"QOS\", "
                        "\"Resource\", \"Reservation\",\n\"RunAwayJobs\", \"Stats\", "
                        "\"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n");
        return 1;
    }
    if (ent < 0) {
        fprintf(stderr, " Invalid command or entity: %s %s\n", cmd, argc > 1 ? argv[1] : "");
        return 1;
    }
    if (show)
        return sam_show(s, ent, argc - 2, argv + 2);
    if (s->readonly) {
        fprintf(stderr, "Can't run this command in readonly mode.\n");
        return 1;
    }
    if (!strcasecmp(cmd, "add") || !strcasecmp(cmd, "create"))
        return sam_add(s, ent, argc - 2, argv + 2);
    if (!strcasecmp(cmd, "modify") || !strcasecmp(cmd, "update"))
        return sam_modify(s, ent, argc - 2, argv + 2);
    if (!strcasecmp(cmd, "delete") || !strcasecmp(cmd, "remove"))
        return sam_delete(s, ent, argc - 2, argv + 2);
    fprintf(stderr, "Invalid keyword: %s\n", cmd);
    return 1;
}

int main(int argc, char **argv)
{
    sam_t s = {.pf = {.delim = "|"},
               .out = LOOM_SBUF_INIT,
               .err = LOOM_SBUF_INIT,
               .argc = argc,
               .argv = argv};
    loom_cli_init(&s.cli, "sacctmgr");
    int first = sacctmgr_opts(&s, argc, argv);
    int rc = first < 0 ? 1 : sacctmgr_run(&s, argc - first, argv + first);
    loom_cli_flush(&s.out);
    fputs(loom_sbuf_str(&s.err), stderr);
    loom_sbuf_free(&s.out);
    loom_sbuf_free(&s.err);
    loom_rpc_close(s.rpc);
    loom_cli_fini(&s.cli);
    return rc ? s.cli.exit_error : 0;
}
