// A small, safe Markdown renderer: every piece of text is HTML-escaped before any tag is added,
// and links keep only http(s), mailto and relative targets. Unclosed constructs (as seen while an
// answer streams in) render as far as they go.
"use strict";

(function (global) {
  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  }

  // Relative targets and http(s)/mailto only: no javascript:, data:, vbscript: and the like.
  function safeUrl(url) {
    const trimmed = url.trim();
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed);
    if (!scheme) return trimmed;
    return ["http", "https", "mailto"].includes(scheme[1].toLowerCase()) ? trimmed : null;
  }

  // Inline Markdown of one escaped-free text run (code spans are handled by the caller).
  function formatInline(raw) {
    // Links are set aside as placeholders so emphasis never rewrites inside an href.
    const links = [];
    const hold = (html) => `\u0000${links.push(html) - 1}\u0000`;
    let text = escapeHtml(raw.replace(/\u0000/g, ""));
    // Images become links: the page never loads a picture a model named.
    text = text.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (m, alt, url) => hold(link(url, emphasis(alt) || url)));
    text = text.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, label, url) => hold(link(url, emphasis(label))));
    text = text.replace(/&lt;(https?:\/\/[^\s&]+)&gt;/g, (m, url) => hold(link(url, url)));
    text = emphasis(text);
    return text.replace(/\u0000(\d+)\u0000/g, (m, n) => links[Number(n)]);
  }

  function emphasis(text) {
    return text
      .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
      // a dunder name (`__init__.py`, `__name__`) is a name, not bold
      .replace(/__(?=\S)([\s\S]*?\S)__/g, (whole, inner) => (/^\w+$/.test(inner) ? whole : `<strong>${inner}</strong>`))
      .replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?!\*)/g, "$1<em>$2</em>")
      .replace(/(^|[^_\w])_(?=\S)([^_]*?\S)_(?![_\w])/g, "$1<em>$2</em>")
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");
  }

  // ``url`` and ``label`` arrive escaped already.
  function link(url, label) {
    const decoded = url.replace(/&amp;/g, "&");
    const target = safeUrl(decoded);
    if (target === null) return label;
    return `<a href="${escapeHtml(target)}" rel="noopener noreferrer" target="_blank">${label}</a>`;
  }

  function inline(text) {
    const parts = [];
    let rest = text;
    while (rest.length) {
      const open = rest.indexOf("`");
      if (open < 0) {
        parts.push(formatInline(rest));
        break;
      }
      let ticks = 1;
      while (rest[open + ticks] === "`") ticks += 1;
      const fence = "`".repeat(ticks);
      const close = rest.indexOf(fence, open + ticks);
      if (close < 0) {
        parts.push(formatInline(rest));
        break;
      }
      parts.push(formatInline(rest.slice(0, open)));
      parts.push(`<code>${escapeHtml(rest.slice(open + ticks, close).trim())}</code>`);
      rest = rest.slice(close + ticks);
    }
    return parts.join("");
  }

  const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const BULLET = /^(\s*)([-*+])\s+(.*)$/;
  const ORDERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|")) row = row.slice(0, -1);
    return row.split("|").map((cell) => cell.trim());
  }

  function isBlockStart(line, next) {
    return (
      FENCE.test(line) || HEADING.test(line) || RULE.test(line) || BULLET.test(line) ||
      ORDERED.test(line) || QUOTE.test(line) || (line.includes("|") && next !== undefined && TABLE_RULE.test(next))
    );
  }

  function renderList(lines, start, ordered) {
    const pattern = ordered ? ORDERED : BULLET;
    const first = pattern.exec(lines[start]);
    const indent = first[1].length;
    const items = [];
    let i = start;
    while (i < lines.length) {
      const match = pattern.exec(lines[i]);
      if (match && match[1].length === indent) {
        items.push([match[3]]);
        i += 1;
        continue;
      }
      const line = lines[i];
      const nested = (BULLET.exec(line) || ORDERED.exec(line));
      if (line.trim() === "") {
        const next = lines[i + 1];
        if (next !== undefined && /^\s+\S/.test(next) && items.length) {
          items[items.length - 1].push("");
          i += 1;
          continue;
        }
        break;
      }
      if ((nested && nested[1].length > indent) || (/^\s+\S/.test(line) && items.length)) {
        items[items.length - 1].push(line.replace(new RegExp(`^\\s{0,${indent + 4}}`), ""));
        i += 1;
        continue;
      }
      if (!isBlockStart(line) && items.length && !nested) {
        items[items.length - 1].push(line.trim());
        i += 1;
        continue;
      }
      break;
    }
    const tag = ordered ? "ol" : "ul";
    const startAttr = ordered && first[2] !== "1" ? ` start="${Number(first[2])}"` : "";
    const body = items
      .map((item) => {
        if (item.length === 1) return `<li>${inline(item[0])}</li>`;
        const [head, ...rest] = item;
        const restHtml = rest.some((l) => isBlockStart(l)) ? render(rest.join("\n")) : inline(rest.join(" "));
        return `<li>${inline(head)}${restHtml.startsWith("<") ? restHtml : " " + restHtml}</li>`;
      })
      .join("");
    return [`<${tag}${startAttr}>${body}</${tag}>`, i];
  }

  function renderTable(lines, start) {
    const head = splitRow(lines[start]);
    const rows = [];
    let i = start + 2;
    while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") {
      rows.push(splitRow(lines[i]));
      i += 1;
    }
    const th = head.map((cell) => `<th>${inline(cell)}</th>`).join("");
    const tb = rows.map((row) => `<tr>${row.map((cell) => `<td>${inline(cell)}</td>`).join("")}</tr>`).join("");
    return [`<table><thead><tr>${th}</tr></thead><tbody>${tb}</tbody></table>`, i];
  }

  function render(markdown) {
    const lines = String(markdown || "").replace(/\r\n?/g, "\n").split("\n");
    const out = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (line.trim() === "") {
        i += 1;
        continue;
      }
      const fence = FENCE.exec(line);
      if (fence) {
        const marker = fence[1];
        const body = [];
        i += 1;
        while (i < lines.length && !lines[i].trim().startsWith(marker)) {
          body.push(lines[i]);
          i += 1;
        }
        i += 1; // the closing fence, when there is one
        const lang = fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : "";
        out.push(`<pre><code${lang}>${escapeHtml(body.join("\n"))}</code></pre>`);
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        const level = heading[1].length;
        out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
        i += 1;
        continue;
      }
      if (RULE.test(line)) {
        out.push("<hr>");
        i += 1;
        continue;
      }
      if (QUOTE.test(line)) {
        const quoted = [];
        while (i < lines.length && QUOTE.test(lines[i])) {
          quoted.push(QUOTE.exec(lines[i])[1]);
          i += 1;
        }
        out.push(`<blockquote>${render(quoted.join("\n"))}</blockquote>`);
        continue;
      }
      if (BULLET.test(line) || ORDERED.test(line)) {
        const [html, next] = renderList(lines, i, !BULLET.test(line));
        out.push(html);
        i = next;
        continue;
      }
      if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
        const [html, next] = renderTable(lines, i);
        out.push(html);
        i = next;
        continue;
      }
      const paragraph = [];
      while (i < lines.length && lines[i].trim() !== "" && !(paragraph.length && isBlockStart(lines[i], lines[i + 1]))) {
        paragraph.push(lines[i]);
        i += 1;
      }
      const html = paragraph
        .map((l, n) => inline(l.trim()) + (n < paragraph.length - 1 ? (/ {2,}$/.test(l) ? "<br>" : "\n") : ""))
        .join("");
      out.push(`<p>${html}</p>`);
    }
    return out.join("\n");
  }

  global.SzragMarkdown = { render, escapeHtml, safeUrl };
})(typeof window !== "undefined" ? window : globalThis);
