// Preview URLs of photos (GET …/photos/{photo_id}/preview/), asked once per photo and size for
// the life of the page (presigned for 6 hours).
import { api, unwrap } from '../../api/client';

const cache = new Map<string, Promise<string>>();

export function previewUrl(inspectionId: number, photoId: number, size: 'thumb' | 'large' | 'original'): Promise<string> {
  const key = `${inspectionId}/${photoId}/${size}`;
  let url = cache.get(key);
  if (!url) {
    url = unwrap(api.GET('/v1/inspections/{id}/photos/{photo_id}/preview/', { params: { path: { id: inspectionId, photo_id: photoId }, query: { size } } })).then((r) => r.url);
    url.catch(() => cache.delete(key)); // a failure is asked again next time
    cache.set(key, url);
  }
  return url;
}
