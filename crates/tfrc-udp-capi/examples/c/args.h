/*
 * Command-line helpers both programs of the example share: a usage error that exits with
 * status 2, and a number option checked against its range. Each program defines PROGRAM (its
 * name) and USAGE (its usage text) before including this header.
 */
#ifndef MEDIA_ARGS_H
#define MEDIA_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Print `why` and the usage text, and exit with status 2. */
static void usage(const char *why) {
    fprintf(stderr, "%s: %s\n%s", PROGRAM, why, USAGE);
    exit(2);
}

/* The number in `text`, from `lo` to `hi`, or exit with a usage message naming `flag`. */
static double number(const char *flag, const char *text, double lo, double hi) {
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value >= lo && value <= hi)) {
        char why[160];
        snprintf(why, sizeof why, "%s: expected a number from %g to %g, found \"%s\"", flag, lo,
                 hi, text);
        usage(why);
    }
    return value;
}

#endif
