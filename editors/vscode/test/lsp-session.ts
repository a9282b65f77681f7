// Drives `tomc lsp` the way the extension does, under plain node: the same settings
// defaults (package.json), the same resolveServer (src/server.ts), and the LSP protocol
// module vscode-languageclient itself speaks through. The `vscode` module exists only inside
// VS Code, so LanguageClient cannot run here; README.md ("Tests") says what that leaves out.
//
//   npm run test:lsp -- [WORKSPACE_DIR]     (tomc on PATH, or TOM_SERVER_PATH=/path/to/tomc)
//
// Exits 0 with one `ok:` line per check, or 1 with the failure.

import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import {
  CompletionRequest,
  createProtocolConnection,
  DefinitionRequest,
  Diagnostic,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  Location,
  MarkupContent,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";

import { resolveServer, ServerNotFound } from "../src/server";

const BROKEN = "scenario demo {\n  agents Sally, Anne\n  rooms room\n\n  Sally, Anne enter room\n  Bob enters hall\n}\n";
const FIXED = BROKEN.replace("  Bob enters hall\n", "  Sally exits room\n  Sally enters \n");

async function main(): Promise<void> {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));
  const settings = manifest.contributes.configuration.properties;
  const workspace = process.argv[2] ?? fs.mkdtempSync(path.join(os.tmpdir(), "tom-lsp-"));

  // A command that is not there: the message the extension shows names the fix.
  assert.throws(
    () => resolveServer("tomc-not-installed", settings["tom.server.args"].default, workspace),
    (err: Error) => err instanceof ServerNotFound && err.message.includes("pip install 'tomc[lsp]'"),
  );
  console.log("ok: a missing command says: install tomc[lsp] or set tom.server.path");

  // A folder VS Code does not trust picks no program: a path into it is refused, whoever's
  // setting names it (a command on PATH or an absolute path still runs).
  for (const into of ["${workspaceFolder}/.venv/bin/tomc", ".venv/bin/tomc"]) {
    assert.throws(
      () => resolveServer(into, ["lsp"], workspace, process.env, false),
      (err: Error) => err instanceof ServerNotFound && err.message.includes("does not trust"),
    );
  }
  console.log("ok: an untrusted folder's own program is refused");

  const server = resolveServer(
    process.env.TOM_SERVER_PATH ?? settings["tom.server.path"].default,
    settings["tom.server.args"].default,
    workspace,
  );
  const child = spawn(server.command, server.args, { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const connection = createProtocolConnection(
    new StreamMessageReader(child.stdout!),
    new StreamMessageWriter(child.stdin!),
  );
  const published: Diagnostic[][] = [];
  let wake: () => void = () => undefined;
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.push(params.diagnostics);
    wake();
  });
  connection.listen();
  const nextDiagnostics = async (): Promise<Diagnostic[]> => {
    const timeout = Date.now() + 60_000;
    while (published.length === 0) {
      assert.ok(Date.now() < timeout, "no diagnostics within 60 s");
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
    return published.shift()!;
  };

  const file = path.join(workspace, "demo.tom");
  fs.writeFileSync(file, BROKEN);
  const uri = pathToFileURL(file).href;
  const document = { uri };
  const init = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(workspace).href,
    workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: path.basename(workspace) }],
    capabilities: {
      textDocument: {
        publishDiagnostics: {},
        completion: { completionItem: {} },
        hover: { contentFormat: ["markdown", "plaintext"] },
        definition: {},
      },
    },
  });
  const caps = init.capabilities;
  assert.ok(caps.completionProvider && caps.hoverProvider && caps.definitionProvider && caps.documentFormattingProvider, JSON.stringify(caps));
  connection.sendNotification(InitializedNotification.type, {});
  console.log(`ok: ${server.command} ${server.args.join(" ")} initialized (completion, hover, definition, formatting)`);

  connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "tom", version: 1, text: BROKEN },
  });
  const codes = (await nextDiagnostics()).map((d) => `${d.code}@${d.range.start.line}`).sort();
  assert.deepStrictEqual(codes, ["E101@5", "E102@5"]);
  console.log(`ok: diagnostics for the open document: ${codes.join(", ")}`);

  connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text: FIXED }],
  });
  const lines = FIXED.split("\n");
  const afterEnters = { line: 6, character: lines[6].length };
  await nextDiagnostics(); // `Sally enters ` is incomplete: a syntax error until typed on
  const completion = await connection.sendRequest(CompletionRequest.type, { textDocument: document, position: afterEnters });
  const labels = (Array.isArray(completion) ? completion : completion?.items ?? []).map((item) => item.label);
  assert.deepStrictEqual(labels, ["room"]);
  console.log("ok: completion after `enters`: room");

  const hover = await connection.sendRequest(HoverRequest.type, { textDocument: document, position: { line: 4, character: lines[4].indexOf("Anne") } });
  const text = (hover?.contents as MarkupContent).value;
  assert.ok(text.includes("**agent** `Anne`"), text);
  console.log("ok: hover on Anne: its declaration");

  const definition = await connection.sendRequest(DefinitionRequest.type, { textDocument: document, position: { line: 4, character: lines[4].indexOf("room") } });
  const target = (Array.isArray(definition) ? definition[0] : definition) as Location;
  assert.deepStrictEqual([target.uri, target.range.start.line], [uri, 2]);
  console.log("ok: go to definition of room: line 3, `rooms room`");

  await connection.sendRequest(ShutdownRequest.type);
  connection.sendNotification(ExitNotification.type);
  assert.strictEqual(await exited, 0);
  connection.dispose();
  console.log("ok: shutdown and exit 0");
}

main().catch((err) => {
  console.error(`FAILED: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  process.exit(1);
});
