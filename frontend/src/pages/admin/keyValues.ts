// Node selectors edited as "key=value" lines.

export function formatKeyValues(map: Record<string, string>): string {
  return Object.entries(map).map(([key, value]) => `${key}=${value}`).join("\n");
}

/** The map, or the first line that is not "key=value" (blank lines are skipped). */
export function parseKeyValues(text: string): { map: Record<string, string> } | { problem: string } {
  const map: Record<string, string> = {};
  const lines = text.split("\n").map((l) => l.trim());
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const at = line.indexOf("=");
    const key = at < 0 ? "" : line.slice(0, at).trim();
    if (!key) return { problem: `line ${i + 1}: write key=value` };
    if (key in map) return { problem: `line ${i + 1}: ${key} is given twice` };
    map[key] = line.slice(at + 1).trim();
  }
  return { map };
}
