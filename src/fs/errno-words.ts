// The errnos a disk most often fails with, said once for every message that names one (fs-error.ts,
// store/sync-failure.ts, the CLI's output): the system's words for it, and what to do when the
// errno alone says (a full disk, a failed one) whatever was being written.

interface Said {
  readonly words: string;
  readonly advice?: string;
}

const ERRNOS: Readonly<Record<string, Said>> = {
  EIO: {
    words: 'input/output error',
    advice: 'the disk or its file system failed; check them (dmesg, fsck), then try again',
  },
  ENOSPC: { words: 'no space left', advice: 'free some space and try again' },
  EDQUOT: { words: 'disk quota exceeded', advice: 'free some space or raise the disk quota and try again' },
  EROFS: { words: 'read-only file system' },
  EMFILE: { words: 'too many open files', advice: 'raise the open files limit (ulimit -n) and try again' },
  ENFILE: { words: 'too many open files', advice: 'raise the open files limit (ulimit -n) and try again' },
};

/** The system's words for an errno, when the table has them ('no space left' for ENOSPC). */
export function errnoWords(code: string | undefined): string | undefined {
  return code === undefined ? undefined : ERRNOS[code]?.words;
}

/** What to do about an errno whatever it was writing (a full disk, a failed one...), when the table knows. */
export function errnoAdvice(code: string | undefined): string | undefined {
  return code === undefined ? undefined : ERRNOS[code]?.advice;
}
