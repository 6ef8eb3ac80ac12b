// Preview URLs of photos (GET …/photos/{photo_id}/preview/: made by the server, presigned for 6
// hours), asked once per photo and size for the life of the page.
import { api, unwrap } from '../../api/client';

export type PreviewSize = 'thumb' | 'large' | 'original';
export interface Preview {
  url: string;
  width: number;
  height: number;
}

const cache = new Map<string, Promise<Preview>>();

export function preview(inspectionId: number, photoId: number, size: PreviewSize): Promise<Preview> {
  const key = `${inspectionId}/${photoId}/${size}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = unwrap(api.GET('/v1/inspections/{id}/photos/{photo_id}/preview/', { params: { path: { id: inspectionId, photo_id: photoId }, query: { size } } })).then(({ url, width, height }) => ({ url, width, height }));
    pending.catch(() => cache.delete(key)); // a failure is asked again next time
    cache.set(key, pending);
  }
  return pending;
}

export const previewUrl = (inspectionId: number, photoId: number, size: PreviewSize): Promise<string> => preview(inspectionId, photoId, size).then((p) => p.url);
