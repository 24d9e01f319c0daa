//! Derive macros for [chnative](https://docs.rs/chnative), a ClickHouse client over
//! the native TCP protocol. Use them through the `chnative` crate, which re-exports
//! them: `#[derive(chnative::Row)]`, `#[derive(chnative::Enum)]`,
//! `#[derive(chnative::Variant)]`; depending on this crate directly is not needed.
//!
//! The macros only list the fields; binding by name, type checks, per-block
//! column resolution and insert buffers live in chnative's
//! [`row` module](https://docs.rs/chnative/latest/chnative/row/index.html), so the
//! generated code stays a few lines per field.

use proc_macro::TokenStream;
use proc_macro2::{Group, Ident, TokenStream as Tokens, TokenTree};
use quote::{quote, ToTokens};
use syn::{parse_macro_input, Data, DeriveInput, Fields, GenericParam, LitStr};

/// Derives `chnative::row::Row` (read) and `chnative::row::RowWrite` (insert) for a
/// struct with named fields. See chnative's
/// [`row` module](https://docs.rs/chnative/latest/chnative/row/index.html) for the
/// attributes (`#[row(rename = "col")]`, `#[row(skip)]`, `#[row(default)]`,
/// `#[row(ignore_extra_columns)]`).
#[proc_macro_derive(Row, attributes(row))]
pub fn derive_row(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives `chnative::row::EnumLabels`, `FromColumn` and `ToColumn` for a Rust
/// enum of unit variants, mapped to an Enum8/Enum16 column by label (the variant
/// name, or `#[row(rename = "label")]`). Labels are checked against the column's
/// type when a result or table is bound.
#[proc_macro_derive(Enum, attributes(row))]
pub fn derive_enum(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand_enum(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives `chnative::row::FromColumn` (read) and `chnative::row::ToColumn` (insert)
/// for a Rust enum of one-field tuple variants, mapped to a `Variant(T1, T2, …)`
/// column. Reading: each alternative of the column's type is read by the first Rust
/// variant whose field type accepts it (checked when a result is bound). Inserting:
/// each Rust variant goes to the first of the column's remaining alternatives its
/// field type can be written to (checked when the table's columns arrive; a variant
/// that fits none is an error naming it and the column type). A NULL is `None` when
/// the field is `Option<Enum>`, in both directions.
#[proc_macro_derive(Variant, attributes(row))]
pub fn derive_variant(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand_variant(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand_variant(input: &DeriveInput) -> syn::Result<Tokens> {
    let attrs = struct_attrs(input)?;
    let krate = &attrs.krate;
    let name = &input.ident;
    let name_str = name.to_string();
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(name, "#[derive(Variant)] needs an enum whose variants hold one value each, e.g. `enum V { Int(u64), Text(String) }`; for a struct of columns use #[derive(Row)]"));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(Variant)] does not support generics: name a concrete type in each alternative",
        ));
    }
    let mut picks = Vec::new();
    let mut reader_tys = Vec::new();
    let mut reader_inits = Vec::new();
    let mut arms = Vec::new();
    let buffer_name = quote::format_ident!("__ChnativeVariantBuffer{}", name);
    let (mut buffer_fields, mut alt_tys, mut alt_names, mut alt_index, mut write_arms) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let alt_count = data.variants.len();
    if alt_count >= 255 {
        return Err(syn::Error::new_spanned(name, "#[derive(Variant)] supports at most 254 alternatives: remove some"));
    }
    for (j, v) in data.variants.iter().enumerate() {
        let ty = match &v.fields {
            Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0].ty,
            _ => {
                return Err(syn::Error::new_spanned(
                    v,
                    "#[derive(Variant)] variants must hold exactly one value: write it as `Name(T)`",
                ))
            }
        };
        let ident = &v.ident;
        let idx = syn::Index::from(j);
        let field = quote::format_ident!("b{}", j);
        let j8 = j as u8;
        write_arms.push(quote!(#name::#ident(v) => {
            #krate::__private::ToColumn::write_to(v, &mut buf.#field)?;
            buf.slots.push(#j8);
        }));
        buffer_fields.push(field);
        alt_tys.push(ty.clone());
        alt_names.push(ident.to_string());
        alt_index.push(j);
        picks.push(quote!(if #krate::__private::accepts::<#ty>(ty) { return ::core::option::Option::Some(#j); }));
        reader_tys.push(quote!(::std::vec::Vec<::core::option::Option<#krate::__private::Reader<'__r, #ty>>>));
        reader_inits.push(quote!({
            let mut readers = ::std::vec::Vec::with_capacity(v.alternatives());
            for k in 0..v.alternatives() {
                readers.push(if v.bound(k) == #j {
                    ::core::option::Option::Some(#krate::__private::Reader::<#ty>::new(&v.alternative(k)?, ctx)?)
                } else {
                    ::core::option::Option::None
                });
            }
            readers
        }));
        arms.push(quote!(#j => match r.1.#idx.get(k) {
            ::core::option::Option::Some(::core::option::Option::Some(reader)) => #name::#ident(reader.get(at)?),
            _ => return ::core::result::Result::Err(#krate::__private::out_of_bounds(#name_str, i)),
        },));
    }
    Ok(quote! {
        impl #name {
            #[doc(hidden)]
            fn __chnative_pick(ty: &#krate::DataType) -> ::core::option::Option<usize> {
                #(#picks)*
                ::core::option::Option::None
            }
        }

        impl<'__r> #krate::__private::FromColumn<'__r> for #name {
            type Reader = (#krate::__private::VariantReader<'__r>, (#(#reader_tys,)*));
            fn accepts(ty: &#krate::DataType) -> bool {
                #krate::__private::variant_accepts(ty, Self::__chnative_pick)
            }
            fn reader(
                view: &#krate::ColumnView<'__r>,
                ctx: &#krate::__private::ReadContext,
            ) -> #krate::__private::RowResult<Self::Reader> {
                let v = #krate::__private::VariantReader::new(view, Self::__chnative_pick)?;
                let readers = (#(#reader_inits,)*);
                ::core::result::Result::Ok((v, readers))
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> #krate::__private::RowResult<Self> {
                let ::core::option::Option::Some((j, k, at)) = r.0.row(i)? else {
                    return ::core::result::Result::Err(r.0.null_error(i));
                };
                ::core::result::Result::Ok(match j {
                    #(#arms)*
                    _ => return ::core::result::Result::Err(#krate::__private::out_of_bounds(#name_str, i)),
                })
            }
            fn is_null(r: &Self::Reader, i: usize) -> bool {
                r.0.is_null(i)
            }
        }

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case)]
        pub struct #buffer_name {
            slots: #krate::__private::VariantSlots,
            #(#buffer_fields: <#alt_tys as #krate::__private::ToColumn>::Buffer,)*
        }

        impl #buffer_name {
            const WRITES: [fn(&#krate::DataType) -> bool; #alt_count] = [#(#krate::__private::writes::<#alt_tys>,)*];
            const NAMES: [&'static str; #alt_count] = [#(#alt_names,)*];
        }

        impl #krate::__private::ColumnBuffer for #buffer_name {
            fn data(&self) -> #krate::InsertData<'_> {
                self.slots.data(::std::vec![#(#krate::__private::ColumnBuffer::data(&self.#buffer_fields),)*])
            }
            fn len(&self) -> usize {
                self.slots.len()
            }
            fn truncate(&mut self, rows: usize) {
                let counts = self.slots.truncate(rows);
                #(#krate::__private::ColumnBuffer::truncate(&mut self.#buffer_fields, counts[#alt_index]);)*
            }
            fn push_default(&mut self) {
                self.slots.push_null();
            }
            fn bytes(&self) -> usize {
                self.slots.len() #(+ #krate::__private::ColumnBuffer::bytes(&self.#buffer_fields))*
            }
        }

        /// Written to a Variant column: each Rust alternative goes to the first of the
        /// column's alternatives its type can be written to.
        impl #krate::__private::ToColumn for #name {
            type Buffer = #buffer_name;
            fn writes(ty: &#krate::DataType) -> bool {
                #krate::__private::VariantSlots::fits(&#buffer_name::WRITES, ty)
            }
            fn buffer(ty: &#krate::DataType) -> #krate::__private::RowResult<Self::Buffer> {
                let slots = #krate::__private::VariantSlots::new(#name_str, &#buffer_name::NAMES, &#buffer_name::WRITES, ty)?;
                ::core::result::Result::Ok(#buffer_name {
                    #(#buffer_fields: #krate::__private::buffer_of::<#alt_tys>(slots.alternative(#alt_index))?,)*
                    slots,
                })
            }
            fn write_to(&self, buf: &mut Self::Buffer) -> #krate::__private::RowResult<()> {
                match self {
                    #(#write_arms)*
                }
                ::core::result::Result::Ok(())
            }
        }
    })
}

fn expand_enum(input: &DeriveInput) -> syn::Result<Tokens> {
    let attrs = struct_attrs(input)?;
    let krate = &attrs.krate;
    let name = &input.ident;
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(name, "#[derive(Enum)] needs an enum of unit variants, e.g. `enum Level { Low, High }`; for a struct of columns use #[derive(Row)]"));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(Enum)] does not support generics: remove the parameters (an Enum column holds labels only)",
        ));
    }
    let mut labels = Vec::new();
    let mut idents = Vec::new();
    for v in &data.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(v, "#[derive(Enum)] variants must be unit variants (an Enum column holds labels only): remove the fields, or use #[derive(Variant)] for alternatives that hold values"));
        }
        let mut label = v.ident.to_string();
        for attr in v.attrs.iter().filter(|a| a.path().is_ident("row")) {
            attr.parse_nested_meta(|m| {
                if m.path.is_ident("rename") {
                    label = rename_value(&m)?;
                    Ok(())
                } else {
                    Err(m.error("unknown variant attribute; expected `rename = \"label\"`"))
                }
            })?;
        }
        labels.push(label);
        idents.push(v.ident.clone());
    }
    let ks: Vec<usize> = (0..idents.len()).collect();
    Ok(quote! {
        impl #krate::__private::EnumLabels for #name {
            const LABELS: &'static [&'static str] = &[#(#labels),*];
            fn from_index(k: usize) -> ::core::option::Option<Self> {
                match k {
                    #(#ks => ::core::option::Option::Some(#name::#idents),)*
                    _ => ::core::option::Option::None,
                }
            }
            fn index(&self) -> usize {
                match self {
                    #(#name::#idents => #ks,)*
                }
            }
        }

        impl<'__r> #krate::__private::FromColumn<'__r> for #name {
            type Reader = #krate::__private::EnumReader<'__r>;
            fn accepts(ty: &#krate::DataType) -> bool {
                #krate::__private::enum_accepts::<Self>(ty)
            }
            fn reader(view: &#krate::ColumnView<'__r>, _: &#krate::__private::ReadContext) -> #krate::__private::RowResult<Self::Reader> {
                #krate::__private::EnumReader::new::<Self>(view)
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> #krate::__private::RowResult<Self> {
                r.get::<Self>(i)
            }
        }

        impl #krate::__private::ToColumn for #name {
            type Buffer = #krate::__private::EnumBuffer;
            fn writes(ty: &#krate::DataType) -> bool {
                #krate::__private::enum_writes::<Self>(ty)
            }
            fn buffer(ty: &#krate::DataType) -> #krate::__private::RowResult<Self::Buffer> {
                #krate::__private::EnumBuffer::new::<Self>(ty)
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> #krate::__private::RowResult<()> {
                buf.push(#krate::__private::EnumLabels::index(self));
                ::core::result::Result::Ok(())
            }
        }
    })
}

struct FieldSpec {
    ident: Ident,
    ty: syn::Type,
    column: String,
    skip: bool,
    default: bool,
}

struct StructAttrs {
    krate: Tokens,
    ignore_extra: bool,
}

fn struct_attrs(input: &DeriveInput) -> syn::Result<StructAttrs> {
    let mut out = StructAttrs { krate: quote!(::chnative), ignore_extra: false };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("row")) {
        attr.parse_nested_meta(|m| {
            if m.path.is_ident("ignore_extra_columns") {
                out.ignore_extra = true;
                Ok(())
            } else if m.path.is_ident("crate") {
                let wrong = |span| syn::Error::new(span, "`crate` takes a path in a string: `crate = \"::chnative\"`");
                let s: LitStr = m.value()?.parse().map_err(|e: syn::Error| wrong(e.span()))?;
                out.krate = s.parse::<syn::Path>().map_err(|_| wrong(s.span()))?.into_token_stream();
                Ok(())
            } else {
                Err(m.error("unknown row attribute; expected `ignore_extra_columns` or `crate = \"path\"`"))
            }
        })?;
    }
    Ok(out)
}

fn field_specs(input: &DeriveInput) -> syn::Result<Vec<FieldSpec>> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(&input.ident, "#[derive(Row)] needs a struct with named fields; for an Enum column use #[derive(Enum)], for a Variant column #[derive(Variant)]"));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "#[derive(Row)] needs named fields (they are bound to columns by name): write `struct Name { column: Type, .. }`",
        ));
    };
    let mut out = Vec::new();
    for f in &named.named {
        let ident = f.ident.clone().expect("named field");
        let mut spec = FieldSpec {
            column: ident.to_string().trim_start_matches("r#").to_string(),
            ident,
            ty: f.ty.clone(),
            skip: false,
            default: false,
        };
        for attr in f.attrs.iter().filter(|a| a.path().is_ident("row")) {
            attr.parse_nested_meta(|m| {
                if m.path.is_ident("rename") {
                    spec.column = rename_value(&m)?;
                    Ok(())
                } else if m.path.is_ident("skip") {
                    spec.skip = true;
                    Ok(())
                } else if m.path.is_ident("default") {
                    spec.default = true;
                    Ok(())
                } else {
                    Err(m.error("unknown field attribute; expected `rename = \"column\"`, `skip` or `default`"))
                }
            })?;
        }
        out.push(spec);
    }
    Ok(out)
}

/// Replaces the lifetime `'from` by `to` everywhere in `tokens` (field types are
/// restated at the row lifetime the stream lends out).
fn relifetime(tokens: Tokens, from: &str, to: &Tokens) -> Tokens {
    let mut out = Tokens::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '\'' => {
                if let Some(TokenTree::Ident(id)) = iter.peek() {
                    if *id == from {
                        iter.next();
                        out.extend(to.clone());
                        continue;
                    }
                }
                out.extend([TokenTree::Punct(p)]);
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), relifetime(g.stream(), from, to));
                ng.set_span(g.span());
                out.extend([TokenTree::Group(ng)]);
            }
            other => out.extend([other]),
        }
    }
    out
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let attrs = struct_attrs(input)?;
    let fields = field_specs(input)?;
    let krate = &attrs.krate;
    let name = &input.ident;
    let mut lifetime: Option<Ident> = None;
    for p in &input.generics.params {
        match p {
            GenericParam::Lifetime(l) if lifetime.is_none() => lifetime = Some(l.lifetime.ident.clone()),
            _ => {
                return Err(syn::Error::new_spanned(
                    p,
                    "#[derive(Row)] supports at most one lifetime parameter and no type parameters: use concrete field types and one lifetime for every borrowed field",
                ))
            }
        }
    }
    let row_lt = quote!('__r);
    let static_lt = quote!('static);
    let at = |ty: &syn::Type, to: &Tokens| -> Tokens {
        match &lifetime {
            Some(l) => relifetime(ty.to_token_stream(), &l.to_string(), to),
            None => ty.to_token_stream(),
        }
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let value_ty = match &lifetime {
        Some(_) => quote!(#name<'__r>),
        None => quote!(#name),
    };

    let active: Vec<&FieldSpec> = fields.iter().filter(|f| !f.skip).collect();
    let mut field_consts = Vec::new();
    let mut reader_tys = Vec::new();
    let mut reader_inits = Vec::new();
    for (k, f) in active.iter().enumerate() {
        let column = &f.column;
        let field = f.ident.to_string().trim_start_matches("r#").to_string();
        let rust =
            f.ty.to_token_stream()
                .to_string()
                .replace(" < ", "<")
                .replace(" >", ">")
                .replace(" ,", ",")
                .replace("& ", "&");
        let default = f.default;
        let ty_static = at(&f.ty, &static_lt);
        let ty_r = at(&f.ty, &row_lt);
        field_consts.push(quote! {
            #krate::__private::Field {
                column: #column,
                field: #field,
                rust_type: #rust,
                default: #default,
                accepts: #krate::__private::accepts::<#ty_static>,
                writes: #krate::__private::writes::<#ty_static>,
                refusal: #krate::__private::refusal::<#ty_static>,
            }
        });
        if f.default {
            reader_tys.push(quote!(::core::option::Option<#krate::__private::Reader<'__r, #ty_r>>));
            reader_inits.push(quote!(#krate::__private::Reader::<#ty_r>::optional(cols, #k, ctx)?));
        } else {
            reader_tys.push(quote!(#krate::__private::Reader<'__r, #ty_r>));
            reader_inits.push(quote!(#krate::__private::Reader::<#ty_r>::required(cols, #k, ctx)?));
        }
    }
    let mut field_reads = Vec::new();
    let mut k = 0usize;
    for f in &fields {
        let id = &f.ident;
        if f.skip {
            field_reads.push(quote!(#id: ::core::default::Default::default()));
            continue;
        }
        let idx = syn::Index::from(k);
        if f.default {
            field_reads.push(quote!(#id: match &readers.#idx {
                ::core::option::Option::Some(r) => r.get(i)?,
                ::core::option::Option::None => ::core::default::Default::default(),
            }));
        } else {
            field_reads.push(quote!(#id: readers.#idx.get(i)?));
        }
        k += 1;
    }
    let ignore_extra = attrs.ignore_extra;
    let name_str = name.to_string();

    // Insert side: one buffer per field, filled row by row.
    let mut buffer_tys = Vec::new();
    let mut buffer_inits = Vec::new();
    let mut pushes = Vec::new();
    let mut datas = Vec::new();
    let mut clears = Vec::new();
    let mut sizes = Vec::new();
    let mut defaults = Vec::new();
    for (k, f) in active.iter().enumerate() {
        let ty = &f.ty;
        let id = &f.ident;
        let idx = syn::Index::from(k);
        let column = &f.column;
        buffer_tys.push(quote!(<#ty as #krate::__private::ToColumn>::Buffer));
        buffer_inits.push(quote!(#krate::__private::buffer_for::<#ty>(types, #k)?));
        pushes.push(quote!(#krate::__private::ToColumn::write_to(&row.#id, &mut buffers.#idx).map_err(|e| #krate::__private::push_error(e, #column))?;));
        datas.push(quote!((#column, #krate::__private::ColumnBuffer::data(&buffers.#idx))));
        clears.push(quote!(#krate::__private::ColumnBuffer::truncate(&mut buffers.#idx, rows);));
        sizes.push(quote!(#krate::__private::ColumnBuffer::bytes(&buffers.#idx)));
        defaults.push(quote!(#krate::__private::ColumnBuffer::push_default(&mut buffers.#idx);));
    }

    Ok(quote! {
        impl #impl_generics #krate::__private::Row for #name #ty_generics #where_clause {
            const NAME: &'static str = #name_str;
            const FIELDS: &'static [#krate::__private::Field] = &[#(#field_consts),*];
            const IGNORE_EXTRA_COLUMNS: bool = #ignore_extra;
            type Value<'__r> = #value_ty;
            type Readers<'__r> = (#(#reader_tys,)*);
            fn readers<'__r>(
                cols: &[::core::option::Option<#krate::ColumnView<'__r>>],
                ctx: &#krate::__private::ReadContext,
            ) -> #krate::__private::RowResult<Self::Readers<'__r>> {
                ::core::result::Result::Ok((#(#reader_inits,)*))
            }
            #[inline]
            fn read<'__r>(readers: &Self::Readers<'__r>, i: usize) -> #krate::__private::RowResult<Self::Value<'__r>> {
                ::core::result::Result::Ok(#name { #(#field_reads),* })
            }
        }

        impl<'__r> #krate::__private::FromColumn<'__r> for #value_ty {
            type Reader = <Self as #krate::__private::Row>::Readers<'__r>;
            fn accepts(ty: &#krate::DataType) -> bool {
                #krate::__private::tuple_accepts::<Self>(ty)
            }
            fn reader(
                view: &#krate::ColumnView<'__r>,
                ctx: &#krate::__private::ReadContext,
            ) -> #krate::__private::RowResult<Self::Reader> {
                let cols = #krate::__private::tuple_columns::<Self>(view)?;
                <Self as #krate::__private::Row>::readers(&cols, ctx)
            }
            #[inline]
            fn read(readers: &Self::Reader, i: usize) -> #krate::__private::RowResult<Self> {
                <Self as #krate::__private::Row>::read(readers, i)
            }
        }

        /// A nested row is a Tuple column, filled field by field.
        impl #impl_generics #krate::__private::ToColumn for #name #ty_generics #where_clause {
            type Buffer = #krate::__private::NestedBuffer<<Self as #krate::__private::RowWrite>::Buffers>;
            fn writes(ty: &#krate::DataType) -> bool {
                #krate::__private::nested_writes::<Self>(ty)
            }
            fn buffer(ty: &#krate::DataType) -> #krate::__private::RowResult<Self::Buffer> {
                #krate::__private::NestedBuffer::new::<Self>(ty)
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> #krate::__private::RowResult<()> {
                buf.push(self)
            }
        }

        impl #impl_generics #krate::__private::RowWrite for #name #ty_generics #where_clause {
            type Buffers = (#(#buffer_tys,)*);
            fn buffers(types: &[#krate::DataType]) -> #krate::__private::RowResult<Self::Buffers> {
                ::core::result::Result::Ok((#(#buffer_inits,)*))
            }
            #[inline]
            fn push(row: &Self, buffers: &mut Self::Buffers) -> #krate::__private::RowResult<()> {
                #(#pushes)*
                ::core::result::Result::Ok(())
            }
            fn columns(buffers: &Self::Buffers) -> ::std::vec::Vec<(&'static str, #krate::InsertData<'_>)> {
                ::std::vec![#(#datas),*]
            }
            fn truncate(buffers: &mut Self::Buffers, rows: usize) {
                #(#clears)*
            }
            fn bytes(buffers: &Self::Buffers) -> usize {
                0 #(+ #sizes)*
            }
            fn push_default(buffers: &mut Self::Buffers) {
                #(#defaults)*
            }
        }
    })
}

/// The string of a `rename = "…"` attribute, or an error that shows the form.
fn rename_value(m: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<String> {
    let lit: LitStr = m
        .value()?
        .parse()
        .map_err(|e: syn::Error| syn::Error::new(e.span(), "`rename` takes a string: `rename = \"name\"`"))?;
    Ok(lit.value())
}
