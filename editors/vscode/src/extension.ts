// The tom extension: highlighting comes from the TextMate grammar in package.json; everything
// else (diagnostics, completion, hover, go to definition, formatting) from `tomc lsp`, which
// this file starts as a language client over stdio.

import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

import { DEFAULT_ARGS, DEFAULT_COMMAND, resolveServer, ServerNotFound } from "./server";

const NAME = "tom language server";
let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // One channel for the whole session, so a restart keeps the previous server's stderr.
  output = vscode.window.createOutputChannel(NAME);
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("tom.restartServer", restart),
    // Trusted now: a server path into the folder may run (resolveServer).
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("tom.server")) {
        void restart();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const settings = vscode.workspace.getConfiguration("tom.server");
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  let server;
  try {
    server = resolveServer(
      settings.get<string>("path", DEFAULT_COMMAND),
      settings.get<string[]>("args", DEFAULT_ARGS),
      folder,
      process.env,
      vscode.workspace.isTrusted,
    );
  } catch (err) {
    if (err instanceof ServerNotFound) {
      void notFound(err.message);
      return;
    }
    throw err;
  }
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    // A relative `use policy "x.tom"` is resolved by the server from the file's own folder;
    // the workspace folder as cwd only matters to what the server logs.
    options: folder ? { cwd: folder } : {},
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "tom" },
      { scheme: "untitled", language: "tom" },
    ],
    outputChannel: output,
  };
  client = new LanguageClient("tom", NAME, serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    // Typically the command ran but is not a tomc with the lsp extra (it prints why and
    // exits 2): its stderr is in the output channel.
    output?.show(true);
    void vscode.window.showErrorMessage(
      `${server.command} ${server.args.join(" ")} did not start the language server ` +
        `(${err instanceof Error ? err.message : String(err)}). Its output is in ` +
        `Output > ${NAME}; if it says the lsp extra is missing: pip install 'tomc[lsp]'.`,
    );
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  // A client whose start failed has no connection left to shut down (stop() would throw).
  if (running?.isRunning()) {
    await running.stop();
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function notFound(message: string): Promise<void> {
  const open = "Open Settings";
  if ((await vscode.window.showErrorMessage(message, open)) === open) {
    await vscode.commands.executeCommand("workbench.action.openSettings", "tom.server");
  }
}
