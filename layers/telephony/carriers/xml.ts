const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;" }

/** Text safe inside an XML attribute or element (URLs carry `&` between query parameters). */
export const escapeXml = (text: string) => text.replace(/[&<>"']/g, (char) => entities[char]!)
