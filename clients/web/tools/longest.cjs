// The longest functions of src/ (every function, method, arrow and constructor, nested ones
// counted within their parent too), by lines; fails if one is over the limit (default 80).
//   npm run longest --prefix clients/web [-- <limit>]
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const root = path.join(__dirname, "..", "src");
const limit = Number(process.argv[2] ?? 80);
const found = [];

function visit(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const line = (pos) => source.getLineAndCharacterOfPosition(pos).line;
  const walk = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const name = node.name?.getText() ?? node.parent?.name?.getText?.() ?? "(anonymous)";
      found.push({ lines: line(node.end) - line(node.getStart()) + 1, where: `${path.relative(root, file)}:${line(node.getStart()) + 1}`, name });
    }
    ts.forEachChild(node, walk);
  };
  walk(source);
}

function scan(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) scan(full);
    else if (entry.name.endsWith(".ts")) visit(full);
  }
}

scan(root);
found.sort((a, b) => b.lines - a.lines);
for (const f of found.slice(0, 5)) console.log(`${String(f.lines).padStart(4)}  ${f.where}  ${f.name}`);
const over = found.filter((f) => f.lines > limit);
if (over.length) {
  console.error(`${over.length} function(s) over ${limit} lines`);
  process.exit(1);
}
