/*
 * replay_main.c: a main() for a libFuzzer target built without libFuzzer
 * (gcc, the normal and ASan builds), so the committed corpus and every
 * crash found so far run as a regression test in each build (ctest
 * fuzz_replay_<target>). Feeds each regular file of each directory given
 * to LLVMFuzzerTestOneInput once; a crash, sanitizer report or abort
 * fails the test. A directory named with a leading '+' must hold at
 * least one file (the seed corpus: a missing corpus must not pass).
 *   replay_<target> +CORPUS_DIR [REGRESSIONS_DIR ...]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0)
            break;
        len += r;
    }
    fclose(f);
    /* an exact-size copy, so a read past the input is caught under ASan */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    if (len)
        memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

int main(int argc, char **argv) {
    int status = 0;
    for (int i = 1; i < argc; i++) {
        const char *dir = argv[i];
        int required = dir[0] == '+';
        dir += required;
        DIR *d = opendir(dir);
        int n = 0;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[4096];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (replay_file(path) != 0) {
                fprintf(stderr, "replay: cannot read %s\n", path);
                status = 1;
            }
            n++;
        }
        if (d)
            closedir(d);
        printf("replay: %d inputs from %s\n", n, dir);
        if (required && n == 0) {
            fprintf(stderr, "replay: no inputs in %s (the committed corpus is missing)\n", dir);
            status = 1;
        }
    }
    return status;
}
