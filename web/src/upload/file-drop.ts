// Files out of a drop or a picker, with their path inside a dropped or picked folder. A dropped
// folder is only readable through DataTransferItem.webkitGetAsEntry (every current browser has
// it); its entries are read in batches (readEntries answers at most ~100 at a time).

export interface PickedFile {
  file: File;
  /** "flight-1/DJI_0001.JPG" for a file inside a folder; the name otherwise. */
  relativePath: string;
}

function readAllEntries(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => {
    const all: FileSystemEntry[] = [];
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) resolve(all);
        else {
          all.push(...batch);
          next();
        }
      }, reject);
    next();
  });
}

function fileOf(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

async function walk(entry: FileSystemEntry, out: PickedFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await fileOf(entry as FileSystemFileEntry);
    out.push({ file, relativePath: entry.fullPath.replace(/^\/+/, '') || file.name });
  } else if (entry.isDirectory) {
    for (const child of await readAllEntries((entry as FileSystemDirectoryEntry).createReader())) await walk(child, out);
  }
}

/** Every file of a drop, folders walked recursively. */
export async function filesFromDrop(data: DataTransfer): Promise<PickedFile[]> {
  const out: PickedFile[] = [];
  const items = Array.from(data.items ?? []).filter((item) => item.kind === 'file');
  // Entries must be taken synchronously, before the first await: the drop's data goes away after.
  const entries = items.map((item) => item.webkitGetAsEntry?.() ?? null);
  if (entries.length > 0 && entries.every((e) => e !== null)) {
    for (const entry of entries) await walk(entry!, out);
    return out;
  }
  return Array.from(data.files).map((file) => ({ file, relativePath: file.name }));
}

/** Files of an <input type=file> (with webkitdirectory, each knows its path in the folder). */
export function filesFromInput(list: FileList | null): PickedFile[] {
  return Array.from(list ?? []).map((file) => ({ file, relativePath: file.webkitRelativePath || file.name }));
}
