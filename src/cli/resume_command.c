/* The resume command train prints (resume_command.h). */
#include <string.h>
#include <sys/stat.h>

#include "cli/resume_command.h"
#include "train/rundir.h"

void rs_cli_shell_word(FILE *out, const char *word)
{
    static const char plain[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%";
    if (*word && !word[strspn(word, plain)]) {
        fprintf(out, " %s", word);
        return;
    }
    fputs(" '", out);
    for (; *word; word++)
        fputs(*word == '\'' ? "'\\''" : (char[2]){*word, 0}, out);
    fputc('\'', out);
}

/* A --config that is no regular file (a pipe: --config <(...)) will not be
 * there to read again: its copy in the run's directory is. */
static const char *config_to_repeat(const char *given, const char *dir, char *copy, size_t size)
{
    struct stat st;
    if (stat(given, &st) == 0 && S_ISREG(st.st_mode))
        return given;
    snprintf(copy, size, "%s/%s", dir, RS_CONFIG_COPY);
    return copy;
}

void rs_cli_resume_command(FILE *out, int argc, char **argv, int resume, const char *dir)
{
    fprintf(out, "rnnsearch train");
    char copy[4200];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--overwrite") || !strcmp(a, "--new-data"))
            continue; /* the checkpoint records the data it continued on */
        if (i > 1 && !strcmp(argv[i - 1], "--config"))
            a = config_to_repeat(a, dir, copy, sizeof copy);
        rs_cli_shell_word(out, a);
    }
    fprintf(out, "%s\n", resume ? "" : " --resume");
}
