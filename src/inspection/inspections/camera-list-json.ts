// The cameras list's record of each camera, kept as JSON text in inspection.cameras.list_json by a
// trigger on every insert and update (migration 0008).
//
// Why stored (bench/README.md, "Scale"): the list of a 100,000-camera inspection must take under a
// second. Building each record at read time cost the database 0.4–0.7 s per 100k rows on
// PostgreSQL (every value converted and concatenated, row by row) and more on PGlite, and the
// server then parsed the text and serialized it again. With the text stored, a page of the list is
// one string_agg of stored texts, written to the reply as it comes (camera-list.ts). The trigger
// keeps it right whoever writes the row (the analysis inserts, the reconstruction updates): the
// code never writes list_json. Its price, measured on 100,000 inserted rows: +1.3 s on PostgreSQL
// (0.8 → 2.0 s), +4 s on PGlite (1.2 → 5.2 s), against minutes of image analysis for as many
// photos; and ~270 bytes per camera.
//
// The text is exactly what Fastify's compiled serializer of the route's Camera schema writes for
// the record (test/inspection-cameras-list.test.ts compares them byte for byte), so the stored and
// the serialized answers cannot be told apart:
// - numbers as JavaScript prints them (json_number below): shortest round-trip digits (both
//   PostgreSQL, with extra_float_digits ≥ 1, and V8 print those; the trigger raises the setting
//   to 1 for its transaction in a session that lowered it), decimal from 1e-6 to 1e21 and
//   exponential outside with an unpadded exponent, -0 as 0, NaN and ±Infinity as null;
// - strings by to_json, which escapes as JSON.stringify does (", \, \b \f \n \r \t, other control
//   characters as lowercase \u00xx; PostgreSQL text holds no lone surrogates);
// - quaternions element by element (each read into a variable first: json_number is then inlined
//   by the planner instead of called, 2.5× faster); [1,0,0,0] when there is none or it is not 4
//   numbers.

/** DDL of the two functions, one statement each (bodies contain semicolons). */
export const cameraListJsonDdl = [
  // PostgreSQL prints floats in exponent form below 1e-4 and from 1e15 ("1e-05", "1e+15"); JavaScript
  // from below 1e-6 and from 1e21, with no zero padding ("1e-7"). Between the two, the exponent form
  // read as numeric prints in decimal with the same digits.
  `create function inspection.json_number(x double precision) returns text
     language sql immutable
     as $$
       select case
         when x is null or x = 'NaN'::float8 or x = 'Infinity'::float8 or x = '-Infinity'::float8 then 'null'
         when x = 0 then '0'
         when abs(x) >= 1e-4::float8 and abs(x) < 1e15::float8 then x::text
         when abs(x) >= 1e-6::float8 and abs(x) < 1e21::float8 then x::text::numeric::text
         else regexp_replace(x::text, 'e([+-])0', 'e\\1')
       end
     $$`,
  `create function inspection.camera_list_json() returns trigger
     language plpgsql
     as $$
     declare
       q jsonb := new.quaternion;
       q0 float8;
       q1 float8;
       q2 float8;
       q3 float8;
       quaternion text := '[1,0,0,0]';
     begin
       if current_setting('extra_float_digits')::int < 1 then
         perform set_config('extra_float_digits', '1', true);
       end if;
       if jsonb_typeof(q) = 'array' and jsonb_array_length(q) = 4
          and jsonb_typeof(q->0) = 'number' and jsonb_typeof(q->1) = 'number'
          and jsonb_typeof(q->2) = 'number' and jsonb_typeof(q->3) = 'number' then
         q0 := (q->>0)::float8;
         q1 := (q->>1)::float8;
         q2 := (q->>2)::float8;
         q3 := (q->>3)::float8;
         quaternion := '[' || inspection.json_number(q0) || ',' || inspection.json_number(q1)
           || ',' || inspection.json_number(q2) || ',' || inspection.json_number(q3) || ']';
       end if;
       new.list_json := '{"id":' || new.id || ',"photo_id":' || new.id || ',"filename":' || to_json(new.filename)::text
         || ',"location":{"latitude":' || inspection.json_number(new.latitude)
         || ',"longitude":' || inspection.json_number(new.longitude)
         || ',"elevation":' || inspection.json_number(new.elevation)
         || '},"mission":' || to_json(new.mission)::text
         || ',"dimensions":{"x":' || new.width || ',"y":' || new.height || '},"quaternions":' || quaternion
         || ',"is_master":' || new.is_master || ',"is_reviewed":' || new.is_reviewed || ',"is_visible":' || new.is_visible || '}';
       return new;
     end
     $$`,
];
