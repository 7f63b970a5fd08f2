/**
 * The names a doc page's snippets use without showing them. Each snippet is a run of lines of a
 * compiled example file; the compiler resolves every identifier in those lines, and a name whose
 * declaration is in an example file, in lines none of the page's snippets shows, is one a reader meets
 * undefined (the client example's `port`, say). Names the example imports from a package, globals and
 * members (`this.x`, `ctx.id`, an option's key) are not counted: the reader has those.
 */
import ts from 'typescript';
import { resolve } from 'node:path';
import { read, runIn } from './markdown.js';

/** A program of the example files, typechecked as tsconfig.json does (the package's name is the source). */
export function examplesProgram(files: readonly string[]): ts.Program {
  const config = ts.readConfigFile('tsconfig.json', (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, resolve('.'));
  return ts.createProgram({
    rootNames: files.map((f) => resolve(f)),
    options: { ...parsed.options, noEmit: true },
  });
}

/** Kinds of declaration whose name is a free name where it is used (not a member reached through a value). */
const FREE = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.VariableDeclaration,
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.InterfaceDeclaration,
  ts.SyntaxKind.TypeAliasDeclaration,
  ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.Parameter,
  ts.SyntaxKind.BindingElement,
]);

/**
 * `name (file:line)` for every use, in a snippet of `blocks`, of a name declared in lines of the
 * example files no snippet of `blocks` shows; a snippet that is no run of any example is reported too.
 */
export function unshownNames(
  program: ts.Program,
  files: readonly string[],
  blocks: readonly string[],
): string[] {
  const checker = program.getTypeChecker();
  const shown = new Map<string, { start: number; end: number }[]>(files.map((f) => [resolve(f), []]));
  const problems: string[] = [];
  for (const block of blocks) {
    const at = files.map((f) => ({ file: resolve(f), run: runIn(block, read(f)) })).find((x) => x.run);
    if (at?.run) shown.get(at.file)?.push(at.run);
    else problems.push(`a snippet that is no run of ${files.join(', ')}: ${block.split('\n')[0]}`);
  }
  const isShown = (file: string, pos: number): boolean =>
    (shown.get(file) ?? []).some((r) => pos >= r.start && pos < r.end);

  for (const [file, runs] of shown) {
    const source = program.getSourceFile(file);
    if (!source || runs.length === 0) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && !isMemberName(node) && isShown(file, node.getStart(source))) {
        const declaration = unshownDeclaration(checker, node, isShown);
        if (declaration) {
          const { line } = declaration.getSourceFile().getLineAndCharacterOfPosition(declaration.getStart());
          problems.push(
            `${node.text} (${declaration.getSourceFile().fileName.split('/').pop()}:${line + 1})`,
          );
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return [...new Set(problems)];
}

function unshownDeclaration(
  checker: ts.TypeChecker,
  node: ts.Identifier,
  isShown: (file: string, pos: number) => boolean,
): ts.Declaration | undefined {
  let symbol = ts.isShorthandPropertyAssignment(node.parent)
    ? checker.getShorthandAssignmentValueSymbol(node.parent)
    : checker.getSymbolAtLocation(node);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) {
    // An import: from a package, the reader has it; from another example file, it must be shown.
    const target = checker.getAliasedSymbol(symbol);
    const fromExample = target.declarations?.some((d) => isExample(d.getSourceFile().fileName));
    if (!fromExample) return undefined;
    symbol = target;
  }
  return symbol?.declarations?.find(
    (d) =>
      FREE.has(d.kind) &&
      isExample(d.getSourceFile().fileName) &&
      !isShown(d.getSourceFile().fileName, d.getStart()),
  );
}

/** `x` of `this.x` or `a.b.x`: a member reached through a value, which the value's type declares. */
const isMemberName = (node: ts.Identifier): boolean =>
  (ts.isPropertyAccessExpression(node.parent) || ts.isQualifiedName(node.parent)) &&
  node.parent.getChildAt(2) === node;

const isExample = (fileName: string): boolean => fileName.includes('/examples/');
