// How the extension finds and launches `tomc lsp`. Kept free of the `vscode` module so that
// test/lsp-session.ts launches the server through this very code under plain node.

import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const DEFAULT_COMMAND = "tomc";
export const DEFAULT_ARGS = ["lsp"];

export interface ServerCommand {
  command: string; // an absolute path to an executable file
  args: string[];
}

/** The server command is missing or not executable; `message` says what to do. */
export class ServerNotFound extends Error {}

/** The `tom.server.path` setting as a file to run: `~` and `${workspaceFolder}` expanded, a
 * relative path (one with a separator, e.g. `.venv/bin/tomc`) taken from the workspace
 * folder, a bare name looked up on PATH. In a folder VS Code does not trust (`trusted`
 * false), a path into the folder is refused: a cloned repository would pick the program
 * run, whoever's setting names it. Throws ServerNotFound with the fix to apply. */
export function resolveServer(
  setting: string,
  args: string[],
  workspaceFolder: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  trusted = true,
): ServerCommand {
  const given = setting.trim() || DEFAULT_COMMAND;
  const intoFolder = given.includes("${workspaceFolder}") ||
    (/[\\/]/.test(given) && !path.isAbsolute(given) && !given.startsWith("~"));
  if (!trusted && intoFolder) {
    throw new ServerNotFound(
      `tom.server.path is "${given}", a program in this folder, which VS Code does not ` +
        `trust: trust the folder (Workspaces: Manage Workspace Trust), or set ` +
        `tom.server.path to an absolute path or a command on PATH.`,
    );
  }
  let expanded = given.replace(/^~(?=$|[\\/])/, os.homedir());
  if (expanded.includes("${workspaceFolder}")) {
    if (!workspaceFolder) {
      throw new ServerNotFound(
        `tom.server.path is "${given}", but no folder is open to take \${workspaceFolder} from.`,
      );
    }
    expanded = expanded.split("${workspaceFolder}").join(workspaceFolder);
  }
  const hasSeparator = /[\\/]/.test(expanded);
  let found: string | undefined;
  if (path.isAbsolute(expanded)) {
    found = executable(expanded, env);
  } else if (hasSeparator) {
    // Relative to the workspace, not to VS Code's own working directory (which is anywhere).
    found = workspaceFolder ? executable(path.resolve(workspaceFolder, expanded), env) : undefined;
  } else {
    found = onPath(expanded, env);
  }
  if (!found) {
    const where = hasSeparator || path.isAbsolute(expanded)
      ? `"${expanded}" is not an executable file`
      : `"${expanded}" is not on PATH`;
    throw new ServerNotFound(
      `The tom language server cannot start: ${where}. Install it with ` +
        `pip install 'tomc[lsp]' (in the environment VS Code sees), or set ` +
        `tom.server.path to the tomc command, e.g. \${workspaceFolder}/.venv/bin/tomc.`,
    );
  }
  return { command: found, args };
}

/** `name` looked up in PATH as a shell would (with PATHEXT's extensions on Windows). */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? "").split(path.delimiter).filter((d) => d !== "");
  for (const dir of dirs) {
    const file = executable(path.join(dir, name), env);
    if (file) {
      return file;
    }
  }
  return undefined;
}

function executable(file: string, env: NodeJS.ProcessEnv): string | undefined {
  const candidates = process.platform === "win32"
    ? [file, ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").map((ext) => file + ext)]
    : [file];
  for (const candidate of candidates) {
    try {
      if (fs.statSync(candidate).isFile()) {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      }
    } catch {
      // missing or not executable: try the next candidate
    }
  }
  return undefined;
}
