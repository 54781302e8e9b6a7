/* test_jobscript.c - batch script checks, #SBATCH extraction and --wrap (CLI_SPEC §0.8, §0.10). */
#include "common/jobscript.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Each message as real sbatch 22.05.8 prints it (after "sbatch: error: "). */
static void test_jobscript_check(void **state)
{
    static const struct {
        const char *in;
        size_t len; /* 0: strlen(in) */
        const char *msg;
    } cases[] = {
        {"", 0, "Batch script is empty!"},
        {"\n", 0, "Batch script contains only whitespace!"},
        {" \t\n\v\f\r", 0, "Batch script contains only whitespace!"},
        {"echo hi\n", 0,
         "This does not look like a batch script.  The first\n"
         "line must start with #! followed by the path to an interpreter.\n"
         "For instance: #!/bin/sh"},
        {"  #!/bin/sh\n", 0,
         "This does not look like a batch script.  The first\n"
         "line must start with #! followed by the path to an interpreter.\n"
         "For instance: #!/bin/sh"},
        {"#", 0,
         "This does not look like a batch script.  The first\n"
         "line must start with #! followed by the path to an interpreter.\n"
         "For instance: #!/bin/sh"},
        /* #! comes before the NUL and DOS checks, NUL before DOS. */
        {"echo \0hi\r\n", 10,
         "This does not look like a batch script.  The first\n"
         "line must start with #! followed by the path to an interpreter.\n"
         "For instance: #!/bin/sh"},
        {"#!/bin/sh\r\necho \0hi\n", 20,
         "The Slurm controller does not allow scripts that\ncontain a NULL character '\\0'."},
        {"#!/bin/sh\r\necho hi\r\n", 0,
         "Batch script contains DOS line breaks (\\r\\n)\n"
         "instead of expected UNIX line breaks (\\n)."},
        {"#!", 0, NULL},
        {"#!/bin/sh\necho\r", 0, NULL}, /* a lone CR is fine */
        {"#!/bin/sh\necho\rfoo\n", 0, NULL},
        {"#!/bin/bash\n#SBATCH -n 2\nsrun hostname\n", 0, NULL},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_err_t err = {0};
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
        int rc = loom_jobscript_check(cases[i].in, len, &err);
        if (!cases[i].msg) {
            assert_int_equal(rc, 0);
            continue;
        }
        assert_int_equal(rc, -LOOM_EPARSE);
        assert_string_equal(err.msg, cases[i].msg);
    }
}

typedef struct dir_case {
    const char *script;
    const char *args[12]; /* "line:arg", NULL-terminated */
} dir_case_t;

static void dir_expect(const dir_case_t *c)
{
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    loom_err_t err = {0};
    int rc = loom_jobscript_directives(c->script, strlen(c->script), NULL, "t.sh", &d, &err);
    size_t n = 0;
    while (c->args[n])
        n++;
    assert_int_equal(rc, (int)n);
    assert_int_equal(d.args.n, n);
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        snprintf(buf, sizeof(buf), "%d:%s", d.lines[i], d.args.v[i]);
        assert_string_equal(buf, c->args[i]);
    }
    loom_jobscript_dirs_free(&d);
}

/* Each case checked against what real sbatch -v reports for the same script. */
static void test_jobscript_directives(void **state)
{
    static const dir_case_t cases[] = {
        /* quotes, a trailing comment, '#' inside a word, quotes mid-word */
        {"#!/bin/bash\n"
         "#SBATCH --job-name=\"my job\" # comment\n"
         "#SBATCH -o 'out put'#x\n"
         "#SBATCH --comment=a\\\"b\"c d\"e\n"
         "#SBATCH --job-name=a#b\n",
         {"2:--job-name=my job", "3:-o", "3:out put", "4:--comment=a\"bc de", "5:--job-name=a",
          NULL}},
        /* indented #SBATCH is a comment; blank lines and comments in between are fine;
         * scanning stops at the first command */
        {"#!/bin/bash\n"
         "#SBATCH -N 2\n"
         "  #SBATCH --partition=indented\n"
         "\n"
         "# plain comment\n"
         "   # indented comment\n"
         "#SBATCH --account=acct1\n"
         "echo hi\n"
         "#SBATCH --ntasks=9\n",
         {"2:-N", "2:2", "7:--account=acct1", NULL}},
        /* arguments of several lines form one argv; tabs separate; escapes */
        {"#!/bin/sh\n#SBATCH -J\n#SBATCH\tfoo\n#SBATCH --comment=x\\#y\n#SBATCH\n",
         {"2:-J", "3:foo", "4:--comment=x#y", NULL}},
        /* no word boundary after the prefix, as in Slurm */
        {"#!/bin/sh\n#SBATCHX --qos=foo\n", {"2:X", "2:--qos=foo", NULL}},
        /* an empty argument ends the line's arguments (Slurm's reading) */
        {"#!/bin/sh\n#SBATCH -J \"\" --hold\n#SBATCH -p a\n", {"2:-J", "3:-p", "3:a", NULL}},
        /* the first line may be a directive line in a fragment; no directives at all */
        {"#!/bin/sh\nsrun hostname\n", {NULL}},
        {"", {NULL}},
        {"#SBATCH -n 1", {"1:-n", "1:1", NULL}},
        /* hetjob separator ends the scan */
        {"#!/bin/sh\n#SBATCH -n 1\n#SBATCH hetjob\n#SBATCH -n 2\n", {"2:-n", "2:1", NULL}},
        /* the old #SLURM prefix */
        {"#!/bin/sh\n#SLURM --job-name=x\n", {"2:--job-name=x", NULL}},
    };
    for (size_t i = 0; i < N(cases); i++)
        dir_expect(&cases[i]);
}

static void test_jobscript_warnings(void **state)
{
    static const char script[] = "#!/bin/sh\n#SLURM -n 1\n#SLURM -N 1\n";
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    assert_int_equal(loom_jobscript_directives(script, strlen(script), NULL, NULL, &d, NULL), 4);
    assert_int_equal(d.warnings.n, 1); /* once */
    assert_string_equal(d.warnings.v[0], "Change from #SLURM to #SBATCH in your script and verify "
                                         "the options are valid in sbatch");
    loom_jobscript_dirs_free(&d);
}

/* A NUL ends a line's text (the check rejects such scripts; extraction copes). */
static void test_jobscript_nul(void **state)
{
    static const char script[] = "#!/bin/sh\n#SBATCH -n 1\0 -N 5\n#SBATCH -c 2\n";
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    assert_int_equal(loom_jobscript_directives(script, sizeof(script) - 1, NULL, NULL, &d, NULL),
                     4);
    assert_string_equal(d.args.v[1], "1");
    assert_string_equal(d.args.v[2], "-c");
    assert_int_equal(d.lines[2], 3);
    loom_jobscript_dirs_free(&d);
}

static void test_jobscript_unmatched_quote(void **state)
{
    static const char script[] = "#!/bin/sh\n#SBATCH -n 1\n#SBATCH --account=\"unterminated\n";
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    loom_jobscript_dirs_t keep = LOOM_JOBSCRIPT_DIRS_INIT;
    loom_err_t err = {0};
    loom_strv_add(&keep.args, "unchanged");
    assert_int_equal(loom_jobscript_directives(script, strlen(script), NULL, "t2.sh", &d, &err),
                     -LOOM_EPARSE);
    assert_string_equal(err.msg, "t2.sh: line 3: Unmatched `\"` in [--account=\"unterminated]");
    assert_int_equal(d.args.n, 0);
    loom_jobscript_dirs_free(&d);
    loom_jobscript_dirs_free(&keep);
}

static void test_jobscript_prefix(void **state)
{
    static const char script[] = "#!/bin/sh\n#PBS -l x\n#LOOM -n 3\n";
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    assert_int_equal(loom_jobscript_directives(script, strlen(script), "#LOOM", NULL, &d, NULL), 2);
    assert_string_equal(d.args.v[1], "3");
    assert_int_equal(d.lines[1], 3);
    /* a second call appends */
    assert_int_equal(loom_jobscript_directives(script, strlen(script), "#PBS", NULL, &d, NULL), 2);
    assert_int_equal(d.args.n, 4);
    assert_string_equal(d.args.v[2], "-l");
    loom_jobscript_dirs_free(&d);
    loom_jobscript_dirs_free(NULL);
}

static void test_jobscript_wrap(void **state)
{
    char *s = loom_jobscript_wrap("hostname");
    assert_string_equal(s, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname\n");
    assert_int_equal(loom_jobscript_check(s, strlen(s), NULL), 0);
    free(s);
    s = loom_jobscript_wrap(NULL);
    assert_string_equal(s, LOOM_JOBSCRIPT_WRAP_HEAD "\n");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobscript_check),    cmocka_unit_test(test_jobscript_directives),
        cmocka_unit_test(test_jobscript_warnings), cmocka_unit_test(test_jobscript_unmatched_quote),
        cmocka_unit_test(test_jobscript_prefix),   cmocka_unit_test(test_jobscript_wrap),
        cmocka_unit_test(test_jobscript_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
