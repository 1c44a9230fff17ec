package postalmail

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is one file part of a multipart body: POST /v1/mail's "document", a batch's
// "template" and "recipients".
type File struct {
	Field       string
	Filename    string
	ContentType string
	Reader      io.Reader
	closer      io.Closer
}

var contentTypes = map[string]string{
	".pdf":  "application/pdf",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".png":  "image/png",
	".txt":  "text/plain",
	".csv":  "text/csv",
	".html": "text/html",
	".htm":  "text/html",
	".md":   "text/markdown",
}

// ContentTypeOf is the content type for a file name, by its extension.
func ContentTypeOf(filename string) string {
	if t, ok := contentTypes[strings.ToLower(filepath.Ext(filename))]; ok {
		return t
	}
	if t := mime.TypeByExtension(filepath.Ext(filename)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// FileFromBytes is a file part from bytes.
func FileFromBytes(field, filename string, data []byte) File {
	return File{Field: field, Filename: filename, ContentType: ContentTypeOf(filename), Reader: bytes.NewReader(data)}
}

// FileFromReader is a file part read from r when the body is built.
func FileFromReader(field, filename string, r io.Reader) File {
	return File{Field: field, Filename: filename, ContentType: ContentTypeOf(filename), Reader: r}
}

// FileFromPath is a file part read from the file at path (closed once the body is built).
func FileFromPath(field, path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	name := filepath.Base(path)
	return File{Field: field, Filename: name, ContentType: ContentTypeOf(name), Reader: f, closer: f}, nil
}

// Multipart builds a multipart/form-data body of fields and files, for the generated
// ...WithBodyWithResponse(ctx, params, contentType, body) operations.
func Multipart(fields map[string]string, files ...File) (contentType string, body io.Reader, err error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	defer func() {
		for _, f := range files {
			if f.closer != nil {
				_ = f.closer.Close()
			}
		}
	}()
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := w.WriteField(k, fields[k]); err != nil {
			return "", nil, err
		}
	}
	for _, f := range files {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": f.Field, "filename": f.Filename}))
		ct := f.ContentType
		if ct == "" {
			ct = ContentTypeOf(f.Filename)
		}
		h.Set("Content-Type", ct)
		part, err := w.CreatePart(h)
		if err != nil {
			return "", nil, err
		}
		if _, err := io.Copy(part, f.Reader); err != nil {
			return "", nil, err
		}
	}
	if err := w.Close(); err != nil {
		return "", nil, err
	}
	return w.FormDataContentType(), &buf, nil
}
