// Reading the shipped Markdown as a reader's tools do: code blocks (fenced or indented), links,
// heading anchors as GitHub makes them, and the shell commands the code blocks show.

export interface CodeBlock {
  /** The fence's info string (`sh`, `yaml`, ...); empty for indented blocks and bare fences. */
  readonly lang: string;
  readonly text: string;
  /** 1-based line of the block's first content line. */
  readonly line: number;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;

/**
 * Every code block of a Markdown text; `outside`: the text with them blanked out (line numbers
 * kept); `prose`: the same without inline code spans either.
 */
export function splitCode(markdown: string): { blocks: CodeBlock[]; outside: string; prose: string } {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  const prose: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]!);
    if (fence) {
      const [, indent, marker, lang] = fence;
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !lines[j]!.trimStart().startsWith(marker!))
        body.push(lines[j++]!.slice(indent!.length));
      blocks.push({ lang: lang!, text: body.join('\n'), line: i + 2 });
      for (let k = i; k <= j && k < lines.length; k++) prose.push('');
      i = j;
      continue;
    }
    const previousBlank = i === 0 || lines[i - 1]!.trim() === '';
    if (previousBlank && /^ {4,}\S/.test(lines[i]!) && !/^\s*([-*+]|\d+\.)\s/.test(lines[i]!)) {
      const indent = /^ */.exec(lines[i]!)![0].length;
      const body: string[] = [];
      let j = i;
      while (j < lines.length && (lines[j]!.trim() === '' || /^ */.exec(lines[j]!)![0].length >= indent))
        body.push(lines[j++]!.slice(indent));
      while (body.length && body.at(-1)!.trim() === '') {
        body.pop();
        j--;
      }
      blocks.push({ lang: '', text: body.join('\n'), line: i + 1 });
      for (let k = i; k < j; k++) prose.push('');
      i = j - 1;
      continue;
    }
    prose.push(lines[i]!);
  }
  const outside = prose.join('\n');
  return { blocks, outside, prose: outside.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length)) };
}

export interface Link {
  readonly target: string;
  readonly line: number;
}

/** The targets of inline links and images, reference definitions, autolinks and HTML links. */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  splitCode(markdown)
    .prose.split('\n')
    .forEach((text, index) => {
      const patterns = [
        /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
        /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g,
        /<(https?:\/\/[^>\s]+)>/g,
        /\b(?:href|src)="([^"]+)"/g,
      ];
      for (const pattern of patterns)
        for (const m of text.matchAll(pattern)) found.push({ target: m[1]!, line: index + 1 });
    });
  return found;
}

/** The anchors GitHub gives the headings of a Markdown text (`## 2. Bucket and upload` → `2-bucket-and-upload`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of splitCode(markdown).outside.split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The commands of a shell code block: continuation lines joined, comments and blank lines dropped. */
export function shellCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line && !line.startsWith('#'));
}

/** The words of a shell command as the shell splits them, quotes removed (no expansion). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote = '';
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = '';
      else if (c === '\\' && quote === '"' && /["\\$`]/.test(command[i + 1] ?? '')) word += command[++i]!;
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word ??= '';
      if (c === "'" || c === '"') quote = c;
      else if (c === '\\') word += command[++i] ?? '';
      else word += c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
